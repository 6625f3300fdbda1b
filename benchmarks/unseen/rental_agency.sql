CREATE TABLE agent (
  id INTEGER PRIMARY KEY,
  name TEXT,
  city TEXT,
  start_dt TEXT,
  annual_pay INTEGER,
  manager_id INTEGER,
  FOREIGN KEY (manager_id) REFERENCES agent(id)
);
CREATE TABLE landlord (
  id INTEGER PRIMARY KEY,
  name TEXT,
  city TEXT,
  phone TEXT,
  type TEXT
);
CREATE TABLE property (
  id INTEGER PRIMARY KEY,
  landlord_id INTEGER,
  agent_id INTEGER,
  address TEXT,
  city TEXT,
  type TEXT,
  bedrooms INTEGER,
  monthly_rent INTEGER,
  FOREIGN KEY (landlord_id) REFERENCES landlord(id),
  FOREIGN KEY (agent_id) REFERENCES agent(id)
);
CREATE TABLE tenant (
  id INTEGER PRIMARY KEY,
  name TEXT,
  city TEXT,
  birth_year INTEGER,
  phone TEXT
);
CREATE TABLE lease (
  id INTEGER PRIMARY KEY,
  property_id INTEGER,
  tenant_id INTEGER,
  start_date TEXT,
  end_date TEXT,
  agreed_rent INTEGER,
  status TEXT,
  FOREIGN KEY (property_id) REFERENCES property(id),
  FOREIGN KEY (tenant_id) REFERENCES tenant(id)
);
CREATE TABLE payment (
  id INTEGER PRIMARY KEY,
  lease_id INTEGER,
  paid_on TEXT,
  amount INTEGER,
  method TEXT,
  FOREIGN KEY (lease_id) REFERENCES lease(id)
);
CREATE TABLE contractor (
  id INTEGER PRIMARY KEY,
  name TEXT,
  city TEXT,
  trade TEXT,
  hourly_rate INTEGER
);
CREATE TABLE ticket (
  id INTEGER PRIMARY KEY,
  property_id INTEGER,
  contractor_id INTEGER,
  reported TEXT,
  type TEXT,
  status TEXT,
  cost INTEGER,
  FOREIGN KEY (property_id) REFERENCES property(id),
  FOREIGN KEY (contractor_id) REFERENCES contractor(id)
);
INSERT INTO agent VALUES
  (1, 'Helen Price', 'Bristol', '2012-03-01', 68000, NULL),
  (2, 'Marcus Hale', 'Leeds', '2014-06-15', 61000, 1),
  (3, 'Priya Nair', 'Bristol', '2016-09-01', 47000, 1),
  (4, 'Tom Okafor', 'Leeds', '2018-01-08', 42000, 2),
  (5, 'Lucy Brandt', 'Leeds', '2019-04-23', 39500, 2),
  (6, 'Samir Haddad', 'Bristol', '2020-11-02', 41000, 3),
  (7, 'Jenna Wolfe', 'York', '2021-07-19', 36000, 2),
  (8, 'Oscar Lind', 'York', '2017-02-27', 52000, 1);
INSERT INTO landlord VALUES
  (1, 'Greenway Homes Ltd', 'Bristol', '0117 555 0101', 'company'),
  (2, 'Alice Moreton', 'Bath', '01225 555 0142', 'individual'),
  (3, 'Northgate Lettings', 'Leeds', '0113 555 0177', 'company'),
  (4, 'David Chen', 'Leeds', '0113 555 0123', 'individual'),
  (5, 'Rosa Delgado', 'York', '01904 555 0190', 'individual'),
  (6, 'Harbourside Estates', 'Bristol', '0117 555 0165', 'company');
INSERT INTO property VALUES
  (1, 1, 3, '12 Quay Street', 'Bristol', 'apartment', 2, 1250),
  (2, 1, 3, '4 Harbour Walk', 'Bristol', 'studio', 1, 850),
  (3, 1, 6, '88 Gloucester Road', 'Bristol', 'house', 3, 1600),
  (4, 2, 6, '7 Pulteney Mews', 'Bath', 'house', 4, 1950),
  (5, 3, 4, '21 Park Row', 'Leeds', 'apartment', 2, 980),
  (6, 3, 4, '3 Call Lane', 'Leeds', 'apartment', 1, 795),
  (7, 3, 5, '55 Otley Road', 'Leeds', 'house', 3, 1150),
  (8, 3, 5, '9 Briggate Court', 'Leeds', 'apartment', 3, 1320),
  (9, 4, 2, '140 Kirkstall Road', 'Leeds', 'studio', 1, 640),
  (10, 5, 7, '2 Bootham Terrace', 'York', 'house', 3, 1275),
  (11, 5, 8, '16 Micklegate', 'York', 'apartment', 2, 925),
  (12, 6, 3, '1 Cabot Place', 'Bristol', 'apartment', 2, 1400),
  (13, 6, 6, '30 Clifton Vale', 'Bristol', 'house', 4, 2100),
  (14, 2, 8, '11 Walcot Street', 'Bath', 'studio', 1, 720);
INSERT INTO tenant VALUES
  (1, 'Amira Khan', 'Bristol', 1994, '07700 900101'),
  (2, 'Ben Foster', 'Cardiff', 1989, '07700 900102'),
  (3, 'Chloe Martin', 'Leeds', 1997, '07700 900103'),
  (4, 'Daniel Reyes', 'Bristol', 1985, '07700 900104'),
  (5, 'Ella Novak', 'York', 1992, '07700 900105'),
  (6, 'Finn Gallagher', 'Manchester', 1990, '07700 900106'),
  (7, 'Grace Liu', 'Leeds', 1999, '07700 900107'),
  (8, 'Hassan Ali', 'London', 1983, '07700 900108'),
  (9, 'Isla Brown', 'Bath', 1996, '07700 900109'),
  (10, 'Jack Turner', 'Bristol', 1991, '07700 900110'),
  (11, 'Kemi Adebayo', 'Leeds', 1988, '07700 900111'),
  (12, 'Leo Schmidt', 'York', 2000, '07700 900112');
INSERT INTO lease VALUES
  (1, 1, 2, '2021-09-01', '2022-08-31', 1180, 'TERMINATED_EARLY'),
  (2, 1, 6, '2022-09-01', '2023-08-31', 1220, 'EXPIRED'),
  (3, 1, 8, '2023-09-01', '2024-08-31', 1250, 'ACTIVE'),
  (4, 2, 1, '2022-02-01', '2023-01-31', 820, 'TERMINATED_EARLY'),
  (5, 3, 9, '2023-03-01', '2024-02-29', 1600, 'ACTIVE'),
  (6, 5, 3, '2022-07-01', '2023-06-30', 950, 'EXPIRED'),
  (7, 5, 4, '2023-07-01', '2024-06-30', 980, 'ACTIVE'),
  (8, 6, 7, '2023-01-15', '2024-01-14', 795, 'TERMINATED_EARLY'),
  (9, 7, 11, '2022-05-01', '2023-04-30', 1100, 'EXPIRED'),
  (10, 8, 7, '2023-10-01', '2024-09-30', 1320, 'ACTIVE'),
  (11, 9, 10, '2023-02-01', '2024-01-31', 640, 'EXPIRED'),
  (12, 10, 5, '2021-11-01', '2022-10-31', 1200, 'TERMINATED_EARLY'),
  (13, 10, 12, '2023-06-01', '2024-05-31', 1275, 'ACTIVE'),
  (14, 11, 5, '2024-01-01', '2024-12-31', 925, 'ACTIVE'),
  (15, 12, 11, '2023-04-01', '2024-03-31', 1400, 'ACTIVE'),
  (16, 14, 1, '2024-01-15', '2025-01-14', 720, 'ACTIVE'),
  (17, 4, 6, '2023-09-15', '2024-09-14', 1950, 'ACTIVE');
INSERT INTO payment VALUES
  (1, 1, '2022-03-01', 1180, 'card'),
  (2, 2, '2022-09-01', 1220, 'bank transfer'),
  (3, 2, '2023-01-01', 1220, 'card'),
  (4, 3, '2023-09-01', 1250, 'card'),
  (5, 3, '2024-01-01', 1250, 'card'),
  (6, 4, '2022-06-01', 820, 'cash'),
  (7, 5, '2023-03-01', 1600, 'bank transfer'),
  (8, 6, '2023-02-01', 950, 'card'),
  (9, 7, '2023-07-01', 980, 'bank transfer'),
  (10, 8, '2023-02-15', 795, 'card'),
  (11, 10, '2023-10-01', 1320, 'card'),
  (12, 11, '2023-02-01', 640, 'cash'),
  (13, 13, '2023-06-01', 1275, 'card'),
  (14, 14, '2024-01-01', 925, 'bank transfer'),
  (15, 15, '2023-04-01', 1400, 'card'),
  (16, 16, '2024-02-01', 720, 'card'),
  (17, 17, '2023-09-15', 1950, 'bank transfer'),
  (18, 9, '2022-12-01', 1100, 'card');
INSERT INTO contractor VALUES
  (1, 'Swift Plumbing', 'Bristol', 'plumbing', 55),
  (2, 'BrightSpark Electric', 'Leeds', 'electrical', 60),
  (3, 'Yorkshire Heating Co', 'Leeds', 'heating', 58),
  (4, 'AllFix Handyman', 'Bristol', 'general', 40),
  (5, 'Minster Roofing', 'York', 'roofing', 65),
  (6, 'Avon Pest Control', 'Bath', 'pest control', 45),
  (7, 'Clearflow Drains', 'Leeds', 'plumbing', 50),
  (8, 'Ouse Glaziers', 'York', 'glazing', 48);
INSERT INTO ticket VALUES
  (1, 1, 1, '2023-01-10', 'leak', 'CLOSED', 180),
  (2, 3, 1, '2023-02-02', 'leak', 'CLOSED', 420),
  (3, 5, 2, '2023-02-20', 'electrical', 'CLOSED', 260),
  (4, 7, 3, '2023-03-15', 'heating', 'CLOSED', 540),
  (5, 10, 5, '2023-04-01', 'roof', 'CLOSED', 980),
  (6, 12, 4, '2023-05-11', 'other', 'CLOSED', 120),
  (7, 8, 7, '2023-06-07', 'leak', 'CLOSED', 150),
  (8, 13, 1, '2023-09-19', 'leak', 'IN_PROGRESS', 300),
  (9, 4, 3, '2023-10-03', 'heating', 'IN_PROGRESS', 450),
  (10, 6, 2, '2023-11-12', 'electrical', 'IN_PROGRESS', 200),
  (11, 11, NULL, '2024-01-05', 'leak', 'OPEN', NULL),
  (12, 9, NULL, '2024-01-18', 'pest', 'OPEN', NULL),
  (13, 2, 4, '2024-01-22', 'other', 'OPEN', 90),
  (14, 7, 3, '2023-12-01', 'heating', 'CLOSED', 610),
  (15, 1, 7, '2024-02-02', 'leak', 'IN_PROGRESS', 130);
