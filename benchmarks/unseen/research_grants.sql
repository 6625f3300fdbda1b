CREATE TABLE researcher (
  rid INTEGER PRIMARY KEY,
  fname TEXT,
  lname TEXT,
  dept TEXT,
  hire_year INTEGER
);
CREATE TABLE grant_award (
  gid INTEGER PRIMARY KEY,
  title TEXT,
  agency TEXT,
  amount INTEGER,
  start_year INTEGER
);
CREATE TABLE grant_member (
  gid INTEGER,
  rid INTEGER,
  role TEXT,
  PRIMARY KEY (gid, rid),
  FOREIGN KEY (gid) REFERENCES grant_award(gid),
  FOREIGN KEY (rid) REFERENCES researcher(rid)
);
CREATE TABLE publication (
  pub_id INTEGER PRIMARY KEY,
  rid INTEGER,
  title TEXT,
  venue TEXT,
  year INTEGER,
  citations INTEGER,
  FOREIGN KEY (rid) REFERENCES researcher(rid)
);
INSERT INTO researcher VALUES
  (1, 'Ada', 'Lindqvist', 'Physics', 2008),
  (2, 'Bruno', 'Keller', 'Chemistry', 2015),
  (3, 'Chiara', 'Bianchi', 'Physics', 2019),
  (4, 'Dev', 'Sharma', 'Biology', 2011),
  (5, 'Eva', 'Novak', 'Chemistry', 2003),
  (6, 'Femi', 'Adeyemi', 'Biology', 2021),
  (7, 'Greta', 'Holm', 'Mathematics', 2017),
  (8, 'Hugo', 'Martin', 'Mathematics', 2022);
INSERT INTO grant_award VALUES
  (1, 'Quantum Sensors', 'NSF', 450000, 2020),
  (2, 'Catalyst Design', 'DOE', 820000, 2019),
  (3, 'Coral Genomics', 'NIH', 600000, 2021),
  (4, 'Dark Matter Survey', 'NSF', 1200000, 2018),
  (5, 'Soil Microbes', 'USDA', 250000, 2022),
  (6, 'Graph Algorithms', 'NSF', 300000, 2023);
INSERT INTO grant_member VALUES
  (1, 1, 'PI'), (1, 3, 'Co-PI'),
  (2, 5, 'PI'), (2, 2, 'Co-PI'),
  (3, 4, 'PI'), (3, 6, 'Co-PI'),
  (4, 1, 'PI'), (4, 3, 'Co-PI'), (4, 5, 'Co-PI'),
  (5, 6, 'PI'),
  (6, 7, 'PI');
INSERT INTO publication VALUES
  (1, 1, 'Entangled probes', 'PRL', 2019, 140),
  (2, 1, 'Sensor noise limits', 'Nature Physics', 2021, 95),
  (3, 3, 'Cold atoms at scale', 'PRL', 2022, 40),
  (4, 2, 'Porous catalysts', 'JACS', 2020, 60),
  (5, 5, 'Metal oxide kinetics', 'JACS', 2017, 210),
  (6, 5, 'Catalysis review', 'Chem Rev', 2021, 330),
  (7, 4, 'Reef resilience', 'Nature', 2022, 180),
  (8, 6, 'Rhizosphere census', 'ISME J', 2023, 12),
  (9, 7, 'Sparse cuts', 'SODA', 2022, 25),
  (10, 1, 'Halo mapping', 'ApJ', 2023, 18),
  (11, 4, 'Symbiont transfer', 'PNAS', 2020, 75);
