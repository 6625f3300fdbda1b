CREATE TABLE person (
  id INTEGER PRIMARY KEY,
  name TEXT,
  country TEXT,
  birth_year INTEGER
);
CREATE TABLE section (
  id INTEGER PRIMARY KEY,
  name TEXT,
  prize_money INTEGER,
  founded_year INTEGER
);
CREATE TABLE film (
  id INTEGER PRIMARY KEY,
  title TEXT,
  director_id INTEGER,
  section_id INTEGER,
  country TEXT,
  runtime_min INTEGER,
  genre TEXT,
  FOREIGN KEY (director_id) REFERENCES person(id),
  FOREIGN KEY (section_id) REFERENCES section(id)
);
CREATE TABLE venue (
  id INTEGER PRIMARY KEY,
  name TEXT,
  city TEXT,
  seats INTEGER
);
CREATE TABLE screening (
  id INTEGER PRIMARY KEY,
  film_id INTEGER,
  venue_id INTEGER,
  date TEXT,
  tickets_sold INTEGER,
  type TEXT,
  FOREIGN KEY (film_id) REFERENCES film(id),
  FOREIGN KEY (venue_id) REFERENCES venue(id)
);
CREATE TABLE jury_member (
  id INTEGER PRIMARY KEY,
  section_id INTEGER,
  person_id INTEGER,
  role TEXT,
  FOREIGN KEY (section_id) REFERENCES section(id),
  FOREIGN KEY (person_id) REFERENCES person(id)
);
CREATE TABLE award (
  id INTEGER PRIMARY KEY,
  name TEXT,
  section_id INTEGER,
  film_id INTEGER,
  FOREIGN KEY (section_id) REFERENCES section(id),
  FOREIGN KEY (film_id) REFERENCES film(id)
);
CREATE TABLE review (
  id INTEGER PRIMARY KEY,
  film_id INTEGER,
  outlet TEXT,
  stars INTEGER,
  date TEXT,
  FOREIGN KEY (film_id) REFERENCES film(id)
);
INSERT INTO person VALUES
  (1, 'Claire Dubois', 'France', 1975),
  (2, 'Kenji Watanabe', 'Japan', 1968),
  (3, 'Maria Lopez', 'Spain', 1982),
  (4, 'Jonas Berg', 'Sweden', 1979),
  (5, 'Amara Okoye', 'Nigeria', 1986),
  (6, 'Luc Moreau', 'France', 1960),
  (7, 'Sofia Rossi', 'Italy', 1971),
  (8, 'Daniel Kim', 'South Korea', 1990),
  (9, 'Helena Novak', 'Czech Republic', 1965),
  (10, 'Omar Haddad', 'Lebanon', 1977),
  (11, 'Ingrid Larsen', 'Norway', 1958),
  (12, 'Pierre Lambert', 'France', 1984),
  (13, 'Tomas Silva', 'Brazil', 1973),
  (14, 'Yuki Tanaka', 'Japan', 1993),
  (15, 'Nadia Petrova', 'Bulgaria', 1969),
  (16, 'Ethan Cole', 'USA', 1981);
INSERT INTO section VALUES
  (1, 'Main Competition', 50000, 1987),
  (2, 'Documentary', 20000, 1995),
  (3, 'Short Film', 10000, 1992),
  (4, 'First Feature', 15000, 2004);
INSERT INTO film VALUES
  (1, 'The Quiet Harbour', 1, 1, 'Belgium', 118, 'drama'),
  (2, 'Paper Lanterns', 2, 1, 'Japan', 134, 'drama'),
  (3, 'Salt and Iron', 3, 1, 'Spain', 101, 'thriller'),
  (4, 'Northern Lights Fall', 4, 1, 'Sweden', 142, 'drama'),
  (5, 'Lagos After Dark', 5, 4, 'Nigeria', 96, 'thriller'),
  (6, 'The Glass Orchard', 7, 1, 'France', 125, 'romance'),
  (7, 'Voices of the Delta', 10, 2, 'Lebanon', 88, 'documentary'),
  (8, 'Concrete Gardens', 12, 2, 'France', 92, 'documentary'),
  (9, 'Minutes to Midnight', 8, 3, 'South Korea', 18, 'thriller'),
  (10, 'Small Hours', 14, 3, 'Japan', 22, 'documentary'),
  (11, 'The Last Ferry', 1, 3, 'France', 15, 'drama'),
  (12, 'Rust Belt Requiem', 16, 2, 'USA', 104, 'documentary'),
  (13, 'Carnival of Ghosts', 13, 4, 'Brazil', 99, 'comedy'),
  (14, 'Second Spring', 8, 4, 'South Korea', 107, 'comedy'),
  (15, 'Echo Valley', 4, 2, 'Norway', 85, 'documentary');
INSERT INTO venue VALUES
  (1, 'Lumiere Hall', 'Lyon', 1250),
  (2, 'Cinema Rex', 'Lyon', 320),
  (3, 'Studio 7', 'Lyon', 120),
  (4, 'Le Palace', 'Annecy', 780),
  (5, 'Bonlieu Screen', 'Annecy', 260),
  (6, 'Open Air Park', 'Grenoble', 1200),
  (7, 'Cinema Nova', 'Grenoble', 180);
INSERT INTO screening VALUES
  (1, 1, 1, '2024-05-10', 790, 'PREMIERE'),
  (2, 1, 4, '2024-05-12', 410, 'PUBLIC'),
  (3, 2, 1, '2024-05-11', 820, 'PREMIERE'),
  (4, 2, 3, '2024-05-10', 95, 'PRESS'),
  (5, 3, 1, '2024-05-12', 700, 'PREMIERE'),
  (6, 4, 1, '2024-05-13', 760, 'PREMIERE'),
  (7, 4, 6, '2024-05-15', 1050, 'PUBLIC'),
  (8, 5, 2, '2024-05-13', 300, 'PREMIERE'),
  (9, 6, 1, '2024-05-14', 805, 'PREMIERE'),
  (10, 6, 3, '2024-05-13', 110, 'PRESS'),
  (11, 7, 5, '2024-05-11', 210, 'PREMIERE'),
  (12, 8, 5, '2024-05-14', 240, 'PREMIERE'),
  (13, 9, 7, '2024-05-12', 150, 'PREMIERE'),
  (14, 10, 7, '2024-05-12', 165, 'PREMIERE'),
  (15, 11, 7, '2024-05-13', 140, 'PREMIERE'),
  (16, 12, 4, '2024-05-15', 380, 'PREMIERE'),
  (17, 13, 2, '2024-05-15', 290, 'PREMIERE'),
  (18, 14, 2, '2024-05-16', 310, 'PREMIERE'),
  (19, 15, 5, '2024-05-16', 180, 'PREMIERE'),
  (20, 2, 6, '2024-05-16', 1100, 'PUBLIC'),
  (21, 3, 4, '2024-05-14', 500, 'PUBLIC'),
  (22, 13, 6, '2024-05-17', 900, 'PUBLIC'),
  (23, 9, 6, '2024-05-17', 1150, 'PUBLIC');
INSERT INTO jury_member VALUES
  (1, 1, 6, 'President'),
  (2, 1, 9, 'Member'),
  (3, 1, 13, 'Member'),
  (4, 2, 11, 'President'),
  (5, 2, 2, 'Member'),
  (6, 2, 15, 'Member'),
  (7, 3, 7, 'President'),
  (8, 3, 15, 'Member'),
  (9, 3, 4, 'Member'),
  (10, 4, 9, 'President'),
  (11, 4, 3, 'Member'),
  (12, 4, 11, 'Member');
INSERT INTO award VALUES
  (1, 'Golden Lantern', 1, 4),
  (2, 'Grand Jury Prize', 1, 2),
  (3, 'Best Director', 1, 6),
  (4, 'Golden Lantern', 2, 8),
  (5, 'Audience Award', 2, 12),
  (6, 'Golden Lantern', 3, 11),
  (7, 'Audience Award', 4, 13),
  (8, 'Golden Lantern', 4, 5),
  (9, 'Audience Award', 1, 3);
INSERT INTO review VALUES
  (1, 1, 'Variety', 4, '2024-05-11'),
  (2, 1, 'Le Monde', 3, '2024-05-12'),
  (3, 2, 'Variety', 5, '2024-05-12'),
  (4, 2, 'Sight and Sound', 5, '2024-05-13'),
  (5, 2, 'Le Monde', 4, '2024-05-12'),
  (6, 3, 'The Guardian', 3, '2024-05-13'),
  (7, 4, 'The Guardian', 5, '2024-05-14'),
  (8, 4, 'Variety', 4, '2024-05-14'),
  (9, 5, 'Le Monde', 4, '2024-05-14'),
  (10, 6, 'Sight and Sound', 2, '2024-05-15'),
  (11, 6, 'The Guardian', 3, '2024-05-15'),
  (12, 7, 'Variety', 3, '2024-05-12'),
  (13, 8, 'Le Monde', 5, '2024-05-15'),
  (14, 9, 'The Guardian', 4, '2024-05-13'),
  (15, 11, 'Sight and Sound', 4, '2024-05-14'),
  (16, 12, 'Variety', 4, '2024-05-16'),
  (17, 13, 'The Guardian', 3, '2024-05-16'),
  (18, 14, 'Le Monde', 2, '2024-05-17'),
  (19, 15, 'Sight and Sound', 3, '2024-05-17');
