CREATE TABLE author (
  author_id INTEGER PRIMARY KEY,
  name TEXT,
  nationality TEXT,
  birth_year INTEGER
);
CREATE TABLE book (
  book_id INTEGER PRIMARY KEY,
  title TEXT,
  author_id INTEGER,
  genre TEXT,
  pub_year INTEGER,
  pages INTEGER,
  FOREIGN KEY (author_id) REFERENCES author(author_id)
);
CREATE TABLE member (
  member_id INTEGER PRIMARY KEY,
  name TEXT,
  city TEXT,
  membership_type TEXT,
  join_year INTEGER
);
CREATE TABLE loan (
  loan_id INTEGER PRIMARY KEY,
  book_id INTEGER,
  member_id INTEGER,
  loan_date TEXT,
  return_date TEXT,
  FOREIGN KEY (book_id) REFERENCES book(book_id),
  FOREIGN KEY (member_id) REFERENCES member(member_id)
);
INSERT INTO author VALUES
  (1, 'Ana Ruiz', 'Spain', 1948),
  (2, 'Tom Becker', 'Germany', 1971),
  (3, 'Ines Duarte', 'Portugal', 1985),
  (4, 'Kenji Mori', 'Japan', 1960),
  (5, 'Laura Chen', 'Canada', 1979),
  (6, 'Peter Novak', 'Germany', 1955),
  (7, 'Maria Rossi', 'Italy', 1990);
INSERT INTO book VALUES
  (1, 'The Silent River', 1, 'Fiction', 1985, 320),
  (2, 'Stars Over Lisbon', 3, 'Romance', 2012, 280),
  (3, 'Engines of Tomorrow', 2, 'Science Fiction', 2001, 410),
  (4, 'The Last Garden', 1, 'Fiction', 1992, 250),
  (5, 'Winter Algorithms', 5, 'Science Fiction', 2015, 515),
  (6, 'Mountain Tales', 4, 'Fantasy', 1999, 190),
  (7, 'The Paper Crane', 4, 'Fiction', 2005, 230),
  (8, 'Dragons of the East', 4, 'Fantasy', 2010, 600),
  (9, 'Numbers and Nature', 6, 'Science', 1988, 350),
  (10, 'Quiet Streets', 5, 'Mystery', 2018, 300),
  (11, 'The Glass Key', 2, 'Mystery', 1995, 275),
  (12, 'Ocean Memory', 3, 'Fiction', 2020, 210);
INSERT INTO member VALUES
  (1, 'Oliver Grant', 'Boston', 'Premium', 2018),
  (2, 'Sofia Lane', 'Denver', 'Basic', 2020),
  (3, 'Lucas Hart', 'Boston', 'Basic', 2019),
  (4, 'Emma Ward', 'Austin', 'Premium', 2021),
  (5, 'Noah Fisher', 'Denver', 'Student', 2022),
  (6, 'Mia Patel', 'Boston', 'Student', 2023),
  (7, 'Liam Brooks', 'Austin', 'Basic', 2017);
INSERT INTO loan VALUES
  (1, 1, 1, '2023-01-05', '2023-01-20'),
  (2, 3, 1, '2023-02-10', '2023-02-28'),
  (3, 5, 2, '2023-02-15', '2023-03-01'),
  (4, 8, 3, '2023-03-02', NULL),
  (5, 6, 1, '2023-03-10', '2023-03-25'),
  (6, 3, 4, '2023-04-01', '2023-04-15'),
  (7, 10, 5, '2023-04-12', NULL),
  (8, 8, 6, '2023-05-03', '2023-05-20'),
  (9, 1, 2, '2023-05-15', '2023-06-01'),
  (10, 11, 1, '2023-06-01', NULL),
  (11, 5, 4, '2023-06-20', '2023-07-02'),
  (12, 3, 6, '2023-07-07', '2023-07-21'),
  (13, 2, 3, '2023-08-01', '2023-08-10');
