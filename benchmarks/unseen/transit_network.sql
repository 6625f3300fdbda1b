CREATE TABLE Station (
  Station_ID INTEGER PRIMARY KEY,
  Name TEXT,
  Zone INTEGER,
  Opened INTEGER,
  Num_Platforms INTEGER
);
CREATE TABLE Line (
  Line_ID INTEGER PRIMARY KEY,
  Line_Name TEXT,
  Color TEXT,
  Length_km REAL
);
CREATE TABLE Line_Stop (
  Line_ID INTEGER,
  Station_ID INTEGER,
  Stop_Order INTEGER,
  PRIMARY KEY (Line_ID, Station_ID),
  FOREIGN KEY (Line_ID) REFERENCES Line(Line_ID),
  FOREIGN KEY (Station_ID) REFERENCES Station(Station_ID)
);
CREATE TABLE Ridership (
  Station_ID INTEGER,
  Year INTEGER,
  Passengers INTEGER,
  PRIMARY KEY (Station_ID, Year),
  FOREIGN KEY (Station_ID) REFERENCES Station(Station_ID)
);
INSERT INTO Station VALUES
  (1, 'Central', 1, 1901, 8),
  (2, 'Harbor', 1, 1925, 4),
  (3, 'Museum Square', 1, 1948, 2),
  (4, 'North Park', 2, 1962, 2),
  (5, 'Riverside', 2, 1955, 3),
  (6, 'University', 2, 1978, 4),
  (7, 'Airport', 3, 1999, 6),
  (8, 'Old Mill', 3, 2005, 2),
  (9, 'Westgate', 2, 2012, 2),
  (10, 'Lakeview', 3, 2020, 1);
INSERT INTO Line VALUES
  (1, 'L1', 'Red', 18.5),
  (2, 'L2', 'Blue', 24.0),
  (3, 'L3', 'Green', 12.3),
  (4, 'L4', 'Yellow', 31.7);
INSERT INTO Line_Stop VALUES
  (1, 1, 1), (1, 2, 2), (1, 5, 3), (1, 4, 4),
  (2, 7, 1), (2, 6, 2), (2, 1, 3), (2, 3, 4), (2, 9, 5),
  (3, 2, 1), (3, 3, 2), (3, 8, 3),
  (4, 7, 1), (4, 5, 2), (4, 6, 3), (4, 8, 4), (4, 9, 5), (4, 4, 6);
INSERT INTO Ridership VALUES
  (1, 2022, 52000), (1, 2023, 55000),
  (2, 2022, 21000), (2, 2023, 19500),
  (3, 2022, 8000), (3, 2023, 9100),
  (4, 2022, 6000), (4, 2023, 6400),
  (5, 2022, 12000), (5, 2023, 11000),
  (6, 2022, 15000), (6, 2023, 17800),
  (7, 2022, 30000), (7, 2023, 36000),
  (8, 2022, 3000), (8, 2023, 2900),
  (9, 2022, 4000), (9, 2023, 5200);
