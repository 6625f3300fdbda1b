CREATE TABLE agt (
  agt_id INTEGER PRIMARY KEY,
  agt_nm TEXT,
  city TEXT,
  hire_dt TEXT,
  comm_pct REAL,
  mgr_id INTEGER,
  FOREIGN KEY (mgr_id) REFERENCES agt(agt_id)
);
CREATE TABLE cust (
  cust_id INTEGER PRIMARY KEY,
  cust_nm TEXT,
  city TEXT,
  dob TEXT,
  seg TEXT,
  agt_id INTEGER,
  FOREIGN KEY (agt_id) REFERENCES agt(agt_id)
);
CREATE TABLE prod (
  prod_cd TEXT PRIMARY KEY,
  prod_nm TEXT,
  cat TEXT,
  base_prem INTEGER
);
CREATE TABLE pol (
  pol_id INTEGER PRIMARY KEY,
  cust_id INTEGER,
  prod_cd TEXT,
  start_dt TEXT,
  end_dt TEXT,
  ann_prem INTEGER,
  status TEXT,
  FOREIGN KEY (cust_id) REFERENCES cust(cust_id),
  FOREIGN KEY (prod_cd) REFERENCES prod(prod_cd)
);
CREATE TABLE adj (
  adj_id INTEGER PRIMARY KEY,
  adj_nm TEXT,
  city TEXT,
  lvl TEXT,
  emp_typ TEXT
);
CREATE TABLE clm (
  clm_id INTEGER PRIMARY KEY,
  pol_id INTEGER,
  adj_id INTEGER,
  loss_dt TEXT,
  rpt_dt TEXT,
  clm_typ TEXT,
  amt_clmd INTEGER,
  status TEXT,
  FOREIGN KEY (pol_id) REFERENCES pol(pol_id),
  FOREIGN KEY (adj_id) REFERENCES adj(adj_id)
);
CREATE TABLE vnd (
  vnd_id INTEGER PRIMARY KEY,
  vnd_nm TEXT,
  city TEXT,
  typ TEXT
);
CREATE TABLE pmt (
  pmt_id INTEGER PRIMARY KEY,
  clm_id INTEGER,
  vnd_id INTEGER,
  pay_dt TEXT,
  amt INTEGER,
  mthd TEXT,
  FOREIGN KEY (clm_id) REFERENCES clm(clm_id),
  FOREIGN KEY (vnd_id) REFERENCES vnd(vnd_id)
);
INSERT INTO agt VALUES
  (1, 'Graham Fleet', 'Norwich', '2005-03-14', 12.0, NULL),
  (2, 'Paula Reyes', 'Norwich', '2012-08-01', 10.0, 1),
  (3, 'Sunil Rao', 'Ipswich', '2015-02-16', 9.5, 1),
  (4, 'Kate Morrow', 'Cambridge', '2009-11-23', 11.0, NULL),
  (5, 'Dylan Shore', 'Cambridge', '2018-05-07', 8.0, 4),
  (6, 'Nadia Haddad', 'Ipswich', '2020-09-14', 8.5, 3),
  (7, 'Leon Fry', 'Peterborough', '2022-01-10', 7.5, 4),
  (8, 'Rosie Tam', 'Norwich', '2023-06-19', 7.0, 2);
INSERT INTO cust VALUES
  (1, 'Arthur Bell', 'Norwich', '1968-04-12', 'IND', 1),
  (2, 'Brenda Cole', 'Norwich', '1975-09-30', 'IND', 2),
  (3, 'Castle Bakery Ltd', 'Ipswich', NULL, 'SME', 3),
  (4, 'Deepa Shah', 'Cambridge', '1988-01-05', 'IND', 5),
  (5, 'Eric Lund', 'Cambridge', '1959-07-21', 'IND', 4),
  (6, 'Fenland Farms', 'Peterborough', NULL, 'SME', 7),
  (7, 'Grace Obi', 'Ipswich', '1992-12-14', 'IND', NULL),
  (8, 'Harold Nunn', 'Norwich', '1947-03-03', 'IND', 2),
  (9, 'Isla Moran', 'Cambridge', '1996-06-25', 'IND', NULL),
  (10, 'Jasper Kent', 'Peterborough', '1981-10-10', 'IND', 7),
  (11, 'Kiln Yard Studios', 'Norwich', NULL, 'SME', 1),
  (12, 'Laura Penn', 'Ipswich', '1970-02-28', 'IND', 6),
  (13, 'Marcus Hale', 'Cambridge', '1985-08-08', 'IND', 5),
  (14, 'Nora Quist', 'Norwich', '2000-11-11', 'IND', 8),
  (15, 'Oakley Motors', 'Cambridge', NULL, 'SME', 4),
  (16, 'Priti Das', 'Peterborough', '1990-05-17', 'IND', NULL),
  (17, 'Quentin Roe', 'Ipswich', '1963-01-19', 'IND', 3),
  (18, 'Ruth Sable', 'Norwich', '1978-07-07', 'IND', 8);
INSERT INTO prod VALUES
  ('HOME', 'Home insurance', 'PERS', 320),
  ('MTR', 'Motor insurance', 'PERS', 540),
  ('TRV', 'Travel insurance', 'PERS', 85),
  ('PET', 'Pet insurance', 'PERS', 210),
  ('LIFE', 'Life cover', 'PERS', 360),
  ('COMM', 'Commercial property', 'BUS', 1500);
INSERT INTO pol VALUES
  (1, 1, 'HOME', '2023-01-01', '2023-12-31', 410, 'EXP'),
  (2, 1, 'HOME', '2024-01-01', '2024-12-31', 445, 'ACTV'),
  (3, 1, 'MTR', '2024-03-01', '2025-02-28', 620, 'ACTV'),
  (4, 2, 'MTR', '2024-02-15', '2025-02-14', 580, 'ACTV'),
  (5, 2, 'PET', '2023-06-01', '2024-05-31', 240, 'LAPS'),
  (6, 3, 'COMM', '2024-01-01', '2024-12-31', 2150, 'ACTV'),
  (7, 4, 'TRV', '2024-04-01', '2025-03-31', 95, 'ACTV'),
  (8, 4, 'HOME', '2024-05-01', '2025-04-30', 330, 'ACTV'),
  (9, 5, 'LIFE', '2015-01-01', '2034-12-31', 720, 'ACTV'),
  (10, 5, 'MTR', '2023-09-01', '2024-08-31', 510, 'CXL'),
  (11, 6, 'COMM', '2024-04-01', '2025-03-31', 3400, 'ACTV'),
  (12, 6, 'MTR', '2024-04-01', '2025-03-31', 1850, 'ACTV'),
  (13, 7, 'MTR', '2024-01-20', '2025-01-19', 890, 'ACTV'),
  (14, 8, 'HOME', '2024-01-01', '2024-12-31', 380, 'ACTV'),
  (15, 8, 'LIFE', '2010-06-01', '2030-05-31', 960, 'ACTV'),
  (16, 9, 'TRV', '2024-06-10', '2024-07-10', 60, 'EXP'),
  (17, 9, 'PET', '2024-02-01', '2025-01-31', 275, 'ACTV'),
  (18, 10, 'HOME', '2024-03-01', '2025-02-28', 360, 'ACTV'),
  (19, 11, 'COMM', '2023-07-01', '2024-06-30', 1750, 'ACTV'),
  (20, 12, 'HOME', '2024-01-15', '2025-01-14', 300, 'ACTV'),
  (21, 12, 'MTR', '2024-01-15', '2025-01-14', 470, 'CXL'),
  (22, 13, 'MTR', '2024-05-05', '2025-05-04', 640, 'ACTV'),
  (23, 14, 'PET', '2024-03-20', '2025-03-19', 190, 'ACTV'),
  (24, 15, 'COMM', '2024-02-01', '2025-01-31', 2600, 'ACTV'),
  (25, 16, 'MTR', '2024-07-01', '2025-06-30', 720, 'ACTV'),
  (26, 17, 'HOME', '2023-11-01', '2024-10-31', 350, 'LAPS'),
  (27, 18, 'TRV', '2024-08-01', '2024-08-21', 45, 'ACTV'),
  (28, 13, 'HOME', '2024-05-05', '2025-05-04', 390, 'ACTV');
INSERT INTO adj VALUES
  (1, 'Simon Yates', 'Norwich', 'SNR', 'FT'),
  (2, 'Tanya Brook', 'Norwich', 'JNR', 'FT'),
  (3, 'Umar Rafiq', 'Cambridge', 'SNR', 'FT'),
  (4, 'Vicky Lowe', 'Ipswich', 'JNR', 'PT'),
  (5, 'Wes Harlow', 'Peterborough', 'SNR', 'CTR'),
  (6, 'Yasmin Ord', 'Cambridge', 'JNR', 'CTR'),
  (7, 'Zac Ellery', 'Ipswich', 'SNR', 'PT');
INSERT INTO clm VALUES
  (1, 2, 1, '2024-01-14', '2024-01-15', 'WATR', 3200, 'PAID'),
  (2, 3, 2, '2024-04-02', '2024-04-03', 'COLL', 1850, 'PAID'),
  (3, 4, 2, '2024-05-19', '2024-05-20', 'COLL', 4200, 'APPR'),
  (4, 5, 1, '2023-11-08', '2023-11-10', 'MED', 780, 'PAID'),
  (5, 6, 4, '2024-02-11', '2024-02-12', 'FIRE', 18500, 'PAID'),
  (6, 6, 4, '2024-06-30', '2024-07-02', 'THFT', 2400, 'OPEN'),
  (7, 8, 3, '2024-06-12', '2024-06-14', 'STRM', 2750, 'APPR'),
  (8, 10, 3, '2023-12-01', '2023-12-01', 'COLL', 5600, 'DENY'),
  (9, 11, 5, '2024-05-03', '2024-05-06', 'STRM', 9800, 'PAID'),
  (10, 12, 5, '2024-06-21', '2024-06-21', 'COLL', 7300, 'OPEN'),
  (11, 13, NULL, '2024-08-15', '2024-08-16', 'THFT', 12500, 'OPEN'),
  (12, 14, 1, '2024-02-28', '2024-03-01', 'WATR', 1450, 'PAID'),
  (13, 17, 6, '2024-04-22', '2024-04-23', 'MED', 960, 'PAID'),
  (14, 17, 6, '2024-07-30', '2024-07-31', 'MED', 420, 'APPR'),
  (15, 18, 5, '2024-05-25', '2024-05-27', 'THFT', 3100, 'DENY'),
  (16, 19, 2, '2024-01-05', '2024-01-09', 'LIAB', 6200, 'APPR'),
  (17, 20, 4, '2024-03-17', '2024-03-18', 'WATR', 2300, 'PAID'),
  (18, 22, 3, '2024-07-04', '2024-07-05', 'COLL', 2900, 'OPEN'),
  (19, 23, NULL, '2024-08-02', '2024-08-05', 'MED', 350, 'OPEN'),
  (20, 24, 6, '2024-03-09', '2024-03-11', 'FIRE', 14200, 'APPR'),
  (21, 25, 5, '2024-07-28', '2024-07-29', 'COLL', 1600, 'CXL'),
  (22, 26, 4, '2024-04-14', '2024-04-20', 'STRM', 1900, 'DENY'),
  (23, 16, NULL, '2024-06-20', '2024-06-28', 'MED', 1200, 'OPEN'),
  (24, 2, 1, '2024-06-05', '2024-06-06', 'STRM', 980, 'APPR'),
  (25, 28, 3, '2024-08-10', '2024-08-12', 'WATR', 2650, 'OPEN'),
  (26, 12, 2, '2024-08-22', '2024-08-22', 'COLL', 2100, 'OPEN');
INSERT INTO vnd VALUES
  (1, 'Anglia Body Repairs', 'Norwich', 'REP'),
  (2, 'Fenway Motor Works', 'Cambridge', 'REP'),
  (3, 'Coastline Builders', 'Ipswich', 'BLDR'),
  (4, 'Broadland Restoration', 'Norwich', 'BLDR'),
  (5, 'Ely Loss Assessors', 'Cambridge', 'ASSR'),
  (6, 'Nene Valley Vets', 'Peterborough', 'VET'),
  (7, 'Orwell Glass', 'Ipswich', 'REP');
INSERT INTO pmt VALUES
  (1, 1, 4, '2024-02-02', 2600, 'BACS'),
  (2, 1, NULL, '2024-02-10', 400, 'BACS'),
  (3, 2, 1, '2024-04-20', 1750, 'BACS'),
  (4, 4, 6, '2023-11-25', 780, 'BACS'),
  (5, 5, 5, '2024-02-20', 900, 'BACS'),
  (6, 5, 3, '2024-03-15', 11000, 'BACS'),
  (7, 5, 3, '2024-04-30', 5200, 'CHQ'),
  (8, 9, NULL, '2024-05-30', 4500, 'BACS'),
  (9, 9, 3, '2024-06-14', 5000, 'BACS'),
  (10, 12, 4, '2024-03-20', 1300, 'BACS'),
  (11, 13, 6, '2024-05-02', 960, 'BACS'),
  (12, 17, NULL, '2024-04-05', 2100, 'CHQ'),
  (13, 16, NULL, '2024-03-01', 3000, 'BACS'),
  (14, 20, 5, '2024-03-25', 850, 'BACS'),
  (15, 20, 3, '2024-05-10', 6000, 'BACS'),
  (16, 7, 4, '2024-07-01', 1200, 'BACS'),
  (17, 3, 2, '2024-06-10', 2500, 'BACS'),
  (18, 24, NULL, '2024-06-20', 980, 'BACS'),
  (19, 14, 6, '2024-08-10', 420, 'BACS'),
  (20, 2, NULL, '2024-04-28', 100, 'CHQ');
