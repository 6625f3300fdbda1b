CREATE TABLE Artist (
  ArtistId INTEGER PRIMARY KEY,
  Name TEXT,
  Country TEXT,
  BirthYear INTEGER,
  DeathYear INTEGER
);
CREATE TABLE PartnerMuseum (
  MuseumId INTEGER PRIMARY KEY,
  Name TEXT,
  City TEXT,
  Country TEXT
);
CREATE TABLE Gallery (
  GalleryId INTEGER PRIMARY KEY,
  Name TEXT,
  Floor INTEGER,
  Wing TEXT
);
CREATE TABLE Artwork (
  ArtworkId INTEGER PRIMARY KEY,
  Title TEXT,
  ArtistId INTEGER,
  Year INTEGER,
  Medium TEXT,
  GalleryId INTEGER,
  InsuranceValue INTEGER,
  AcquiredYear INTEGER,
  FOREIGN KEY (ArtistId) REFERENCES Artist(ArtistId),
  FOREIGN KEY (GalleryId) REFERENCES Gallery(GalleryId)
);
CREATE TABLE Exhibition (
  ExhibitionId INTEGER PRIMARY KEY,
  Title TEXT,
  GalleryId INTEGER,
  StartDate TEXT,
  EndDate TEXT,
  Type TEXT,
  FOREIGN KEY (GalleryId) REFERENCES Gallery(GalleryId)
);
CREATE TABLE ExhibitionArtwork (
  ExhibitionId INTEGER,
  ArtworkId INTEGER,
  PRIMARY KEY (ExhibitionId, ArtworkId),
  FOREIGN KEY (ExhibitionId) REFERENCES Exhibition(ExhibitionId),
  FOREIGN KEY (ArtworkId) REFERENCES Artwork(ArtworkId)
);
CREATE TABLE Loan (
  LoanId INTEGER PRIMARY KEY,
  ArtworkId INTEGER,
  MuseumId INTEGER,
  StartDate TEXT,
  EndDate TEXT,
  Status TEXT,
  FOREIGN KEY (ArtworkId) REFERENCES Artwork(ArtworkId),
  FOREIGN KEY (MuseumId) REFERENCES PartnerMuseum(MuseumId)
);
CREATE TABLE Visitor (
  VisitorId INTEGER PRIMARY KEY,
  Name TEXT,
  City TEXT,
  Country TEXT,
  IsMember TEXT
);
CREATE TABLE Ticket (
  TicketId INTEGER PRIMARY KEY,
  VisitorId INTEGER,
  ExhibitionId INTEGER,
  VisitDate TEXT,
  Price REAL,
  Type TEXT,
  FOREIGN KEY (VisitorId) REFERENCES Visitor(VisitorId),
  FOREIGN KEY (ExhibitionId) REFERENCES Exhibition(ExhibitionId)
);
INSERT INTO Artist VALUES
  (1, 'Claire Dumont', 'France', 1848, 1921),
  (2, 'Pieter Vos', 'Netherlands', 1861, 1932),
  (3, 'Eleanor Whitfield', 'USA', 1889, 1971),
  (4, 'Lucien Marchand', 'France', 1852, 1930),
  (5, 'Rosa Delgado', 'Mexico', 1911, 1968),
  (6, 'Arthur Penrose', 'United Kingdom', 1901, 1979),
  (7, 'Aiko Tanaka', 'Japan', 1948, NULL),
  (8, 'Samuel Okoro', 'Nigeria', 1962, NULL),
  (9, 'Margaret Hale', 'USA', 1905, 1988),
  (10, 'Jonas Lindgren', 'Sweden', 1975, NULL),
  (11, 'Isabel Ferreira', 'Portugal', 1939, 2015),
  (12, 'Henrik Bauer', 'Germany', 1958, NULL);
INSERT INTO PartnerMuseum VALUES
  (1, 'Harbor City Art Museum', 'Baltimore', 'USA'),
  (2, 'Kunsthalle Nord', 'Hamburg', 'Germany'),
  (3, 'Galerie Lumiere', 'Lyon', 'France'),
  (4, 'Museo del Sol', 'Guadalajara', 'Mexico'),
  (5, 'Northern Light Gallery', 'Toronto', 'Canada'),
  (6, 'Stadtmuseum Leipzig', 'Leipzig', 'Germany'),
  (7, 'Thames Modern', 'London', 'United Kingdom'),
  (8, 'Pacific Arts Center', 'Seattle', 'USA');
INSERT INTO Gallery VALUES
  (1, 'Impressionist Hall', 1, 'East'),
  (2, 'Sculpture Court', 1, 'West'),
  (3, 'Modern Gallery', 2, 'East'),
  (4, 'Photography Room', 2, 'West'),
  (5, 'Works on Paper', 3, 'East'),
  (6, 'Contemporary Loft', 3, 'West'),
  (7, 'Americas Gallery', 2, 'North');
INSERT INTO Artwork VALUES
  (1, 'Morning Fog on the Seine', 1, 1889, 'OIL', 1, 4200000, 1954),
  (2, 'Poppies by the Road', 1, 1895, 'OIL', 1, 3800000, 1961),
  (3, 'Boats at Dusk', 1, 1901, 'WC', 5, 650000, 1970),
  (4, 'Harvest in Zeeland', 2, 1890, 'OIL', 1, 2900000, 1948),
  (5, 'Windmill Study', 2, 1892, 'WC', NULL, 410000, 1948),
  (6, 'Desert Bloom', 3, 1931, 'OIL', 7, 3100000, 1975),
  (7, 'Canyon Light', 3, 1938, 'WC', 7, 720000, 1980),
  (8, 'The Sculptor''s Daughter', 4, 1898, 'SCU', 2, 2500000, 1950),
  (9, 'Bronze Dancer', 4, 1904, 'SCU', 2, 1900000, 1966),
  (10, 'Torso in Marble', 4, 1911, 'SCU', NULL, 1350000, 1966),
  (11, 'Market Day in Oaxaca', 5, 1943, 'OIL', 7, 2200000, 1990),
  (12, 'Self-Portrait with Marigolds', 5, 1950, 'OIL', 7, 5100000, 1995),
  (13, 'Reclining Form', 6, 1952, 'SCU', 2, 1510000, 1978),
  (14, 'Coastal Abstraction', 6, 1958, 'OIL', NULL, 480000, 1985),
  (15, 'Infinite Dots No. 7', 7, 1992, 'ACR', 6, 2700000, 2005),
  (16, 'Pumpkin Field', 7, 2004, 'INS', 6, 1800000, 2012),
  (17, 'Lagos Crossing', 8, 2011, 'ACR', 6, 950000, 2016),
  (18, 'Ancestral Mask II', 8, 2016, 'SCU', 3, 620000, 2019),
  (19, 'Half Dome, Winter', 9, 1944, 'PHO', 4, 180000, 1983),
  (20, 'Mesa Storm', 9, 1951, 'PHO', 4, 150000, 1983),
  (21, 'Night Ferry', 10, 2018, 'PHO', NULL, 90000, 2020),
  (22, 'Lisbon Rooftops', 11, 1972, 'OIL', 3, 870000, 1999),
  (23, 'Blue Tiles', 11, 1980, 'ACR', 3, 560000, 2001),
  (24, 'Steel Arc', 12, 1995, 'SCU', 3, 1100000, 2008),
  (25, 'Study in Red', 12, 1999, 'OIL', 3, 740000, 2010),
  (26, 'Drawing for Reclining Form', 6, 1950, 'WC', 5, 210000, 1978),
  (27, 'Fishermen Mending Nets', 2, 1888, 'WC', NULL, 260000, 1948);
INSERT INTO Exhibition VALUES
  (1, 'Light on Water: French Landscapes', 1, '2023-03-01', '2023-06-30', 'GRP'),
  (2, 'Lucien Marchand: Sculpture', 2, '2023-05-15', '2023-09-15', 'SOLO'),
  (3, 'Aiko Tanaka: Infinity', 6, '2023-10-01', '2024-01-31', 'SOLO'),
  (4, 'Photographs of the American West', 4, '2023-07-01', '2023-10-31', 'GRP'),
  (5, 'Voices of Mexico', 7, '2024-02-01', '2024-05-31', 'GRP'),
  (6, 'Art Since 1990', 3, '2024-03-15', '2024-06-30', 'GRP'),
  (7, 'Paper Trails', 5, '2024-04-01', '2024-07-31', 'GRP');
INSERT INTO ExhibitionArtwork VALUES
  (1, 1), (1, 2), (1, 3), (1, 4),
  (2, 8), (2, 9), (2, 10),
  (3, 15), (3, 16),
  (4, 7), (4, 19), (4, 20),
  (5, 11), (5, 12),
  (6, 18), (6, 24), (6, 25),
  (7, 3), (7, 7), (7, 26);
INSERT INTO Loan VALUES
  (1, 1, 3, '2019-03-01', '2019-08-31', 'RETURNED'),
  (2, 1, 7, '2022-10-01', '2023-02-28', 'RETURNED'),
  (3, 4, 2, '2021-05-15', '2021-11-15', 'RETURNED'),
  (4, 5, 2, '2024-02-01', NULL, 'ON_LOAN'),
  (5, 12, 4, '2020-06-01', '2020-12-31', 'RETURNED'),
  (6, 11, 4, '2023-09-01', '2024-01-31', 'RETURNED'),
  (7, 12, 8, '2022-04-01', '2022-09-30', 'RETURNED'),
  (8, 15, 5, '2021-02-01', '2021-07-31', 'RETURNED'),
  (9, 15, 7, '2023-04-15', '2023-10-15', 'RETURNED'),
  (10, 15, 1, '2019-09-01', '2020-01-31', 'RETURNED'),
  (11, 10, 6, '2024-01-10', NULL, 'ON_LOAN'),
  (12, 19, 8, '2018-05-01', '2018-10-31', 'RETURNED'),
  (13, 20, 8, '2018-05-01', '2018-10-31', 'RETURNED'),
  (14, 2, 3, '2023-06-01', '2023-09-30', 'RETURNED'),
  (15, 8, 3, '2017-04-01', '2017-09-30', 'RETURNED'),
  (16, 24, 2, '2022-03-01', '2022-06-30', 'RETURNED'),
  (17, 6, 1, '2021-10-01', '2022-02-28', 'RETURNED'),
  (18, 4, 6, '2019-04-01', '2019-07-31', 'RETURNED'),
  (19, 22, 7, '2023-11-01', '2024-02-29', 'RETURNED'),
  (20, 16, 2, '2020-01-15', '2020-05-31', 'RETURNED'),
  (21, 14, 7, '2016-05-01', '2016-09-30', 'RETURNED');
INSERT INTO Visitor VALUES
  (1, 'Rebecca Stone', 'Boston', 'USA', 'Y'),
  (2, 'Tom Hargreaves', 'Manchester', 'United Kingdom', 'N'),
  (3, 'Camille Roux', 'Lyon', 'France', 'N'),
  (4, 'Daniel Park', 'Toronto', 'Canada', 'Y'),
  (5, 'Laura Bianchi', 'Milan', 'Italy', 'N'),
  (6, 'Kevin O''Neill', 'Boston', 'USA', 'N'),
  (7, 'Priya Nair', 'Toronto', 'Canada', 'N'),
  (8, 'Marta Kowalczyk', 'Warsaw', 'Poland', 'Y'),
  (9, 'Jorge Castillo', 'Guadalajara', 'Mexico', 'N'),
  (10, 'Emily Sato', 'Seattle', 'USA', 'Y'),
  (11, 'Hannah Becker', 'Hamburg', 'Germany', 'N'),
  (12, 'Samuel Adeyemi', 'Lagos', 'Nigeria', 'N'),
  (13, 'Olivia Grant', 'Vancouver', 'Canada', 'N'),
  (14, 'Nathan Cole', 'Baltimore', 'USA', 'Y');
INSERT INTO Ticket VALUES
  (1, 1, 1, '2023-03-12', 5.0, 'MEMBER'),
  (2, 2, 1, '2023-04-02', 35.0, 'ADULT'),
  (3, 3, 1, '2023-04-02', 25.0, 'STUDENT'),
  (4, 5, 1, '2023-05-20', 35.0, 'ADULT'),
  (5, 6, NULL, '2023-05-21', 25.0, 'ADULT'),
  (6, 1, 2, '2023-06-10', 5.0, 'MEMBER'),
  (7, 4, 2, '2023-07-08', 5.0, 'MEMBER'),
  (8, 7, 2, '2023-07-08', 25.0, 'STUDENT'),
  (9, 11, 2, '2023-08-19', 35.0, 'ADULT'),
  (10, 14, 2, '2023-09-02', 5.0, 'MEMBER'),
  (11, 9, 2, '2023-09-03', 28.0, 'SENIOR'),
  (12, 10, 4, '2023-07-15', 5.0, 'MEMBER'),
  (13, 6, 4, '2023-08-05', 35.0, 'ADULT'),
  (14, 13, 4, '2023-08-05', 28.0, 'SENIOR'),
  (15, 2, NULL, '2023-08-26', 25.0, 'ADULT'),
  (16, 4, 3, '2023-10-14', 5.0, 'MEMBER'),
  (17, 7, 3, '2023-10-14', 25.0, 'STUDENT'),
  (18, 12, 3, '2023-11-11', 35.0, 'ADULT'),
  (19, 8, 3, '2023-12-02', 5.0, 'MEMBER'),
  (20, 13, 3, '2023-12-28', 28.0, 'SENIOR'),
  (21, 3, 3, '2024-01-06', 25.0, 'STUDENT'),
  (22, 5, NULL, '2024-01-20', 25.0, 'ADULT'),
  (23, 9, 5, '2024-02-17', 28.0, 'SENIOR'),
  (24, 1, 5, '2024-03-09', 5.0, 'MEMBER'),
  (25, 4, 5, '2024-03-30', 5.0, 'MEMBER'),
  (26, 7, 5, '2024-04-13', 25.0, 'STUDENT'),
  (27, 14, 6, '2024-03-23', 5.0, 'MEMBER'),
  (28, 10, 6, '2024-04-20', 5.0, 'MEMBER'),
  (29, 6, 6, '2024-05-04', 35.0, 'ADULT'),
  (30, 11, NULL, '2024-05-11', 25.0, 'ADULT'),
  (31, 8, 7, '2024-04-27', 5.0, 'MEMBER'),
  (32, 12, 7, '2024-05-18', 35.0, 'ADULT'),
  (33, 13, NULL, '2024-06-01', 18.0, 'SENIOR'),
  (34, 2, 5, '2024-05-25', 35.0, 'ADULT'),
  (35, 3, NULL, '2024-06-08', 15.0, 'STUDENT');
