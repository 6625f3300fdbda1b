CREATE TABLE Department (
  DepartmentId INTEGER PRIMARY KEY,
  DeptName TEXT,
  Building TEXT,
  Faculty TEXT
);
CREATE TABLE Researcher (
  ResearcherId INTEGER PRIMARY KEY,
  FullName TEXT,
  DepartmentId INTEGER,
  Role TEXT,
  StartYear INTEGER,
  SupervisorId INTEGER,
  FOREIGN KEY (DepartmentId) REFERENCES Department(DepartmentId),
  FOREIGN KEY (SupervisorId) REFERENCES Researcher(ResearcherId)
);
CREATE TABLE Lab (
  LabId INTEGER PRIMARY KEY,
  LabName TEXT,
  Building TEXT,
  Floor INTEGER,
  DepartmentId INTEGER,
  ManagerId INTEGER,
  SafetyLevel INTEGER,
  FOREIGN KEY (DepartmentId) REFERENCES Department(DepartmentId),
  FOREIGN KEY (ManagerId) REFERENCES Researcher(ResearcherId)
);
CREATE TABLE InstrumentType (
  TypeCode TEXT PRIMARY KEY,
  TypeName TEXT,
  HourlyCost INTEGER
);
CREATE TABLE Instrument (
  InstrumentId INTEGER PRIMARY KEY,
  Name TEXT,
  TypeCode TEXT,
  LabId INTEGER,
  PurchaseYear INTEGER,
  Status TEXT,
  FOREIGN KEY (TypeCode) REFERENCES InstrumentType(TypeCode),
  FOREIGN KEY (LabId) REFERENCES Lab(LabId)
);
CREATE TABLE Project (
  ProjectId INTEGER PRIMARY KEY,
  Title TEXT,
  LeadId INTEGER,
  Funder TEXT,
  Budget INTEGER,
  StartDate TEXT,
  Status TEXT,
  FOREIGN KEY (LeadId) REFERENCES Researcher(ResearcherId)
);
CREATE TABLE Booking (
  BookingId INTEGER PRIMARY KEY,
  InstrumentId INTEGER,
  ResearcherId INTEGER,
  ProjectId INTEGER,
  BookingDate TEXT,
  Hours INTEGER,
  Status TEXT,
  FOREIGN KEY (InstrumentId) REFERENCES Instrument(InstrumentId),
  FOREIGN KEY (ResearcherId) REFERENCES Researcher(ResearcherId),
  FOREIGN KEY (ProjectId) REFERENCES Project(ProjectId)
);
CREATE TABLE Certification (
  ResearcherId INTEGER,
  TypeCode TEXT,
  CertifiedDate TEXT,
  PRIMARY KEY (ResearcherId, TypeCode),
  FOREIGN KEY (ResearcherId) REFERENCES Researcher(ResearcherId),
  FOREIGN KEY (TypeCode) REFERENCES InstrumentType(TypeCode)
);
INSERT INTO Department VALUES
  (1, 'Chemistry', 'Joseph Black Building', 'SCI'),
  (2, 'Molecular Biology', 'Davidson Building', 'MED'),
  (3, 'Materials Engineering', 'Rankine Building', 'ENG'),
  (4, 'Physics', 'Kelvin Building', 'SCI'),
  (5, 'Pharmacology', 'Wolfson Building', 'MED');
INSERT INTO Researcher VALUES
  (1, 'Helen Marsh', 1, 'PI', 2008, NULL),
  (2, 'Ravi Iyer', 1, 'PDR', 2020, 1),
  (3, 'Sofia Bianchi', 1, 'PHD', 2022, 1),
  (4, 'Tom Reilly', 1, 'TECH', 2015, NULL),
  (5, 'Grace Obi', 2, 'PI', 2011, NULL),
  (6, 'Lukas Weber', 2, 'PDR', 2021, 5),
  (7, 'Ana Ruiz', 2, 'PHD', 2021, 5),
  (8, 'Ming Zhao', 2, 'PHD', 2023, 5),
  (9, 'David Kerr', 3, 'PI', 2005, NULL),
  (10, 'Fatima Noor', 3, 'PHD', 2020, 9),
  (11, 'Oscar Lund', 3, 'TECH', 2018, NULL),
  (12, 'Irene Costa', 4, 'PI', 2013, NULL),
  (13, 'Jonas Berg', 4, 'PDR', 2022, 12),
  (14, 'Keira Walsh', 4, 'PHD', 2023, 12),
  (15, 'Priya Menon', 5, 'PI', 2016, NULL),
  (16, 'Sean Byrne', 5, 'PHD', 2022, 15),
  (17, 'Chloe Martin', 5, 'PDR', 2019, 15),
  (18, 'Emil Novak', 1, 'PHD', 2024, 1),
  (19, 'Lena Fischer', 3, 'PDR', 2023, 9),
  (20, 'Noel Grant', 2, 'TECH', 2012, NULL);
INSERT INTO Lab VALUES
  (1, 'Synthesis Lab', 'Joseph Black Building', 2, 1, 4, 1),
  (2, 'Analytical Suite', 'Joseph Black Building', 1, 1, 4, 2),
  (3, 'Cell Culture Lab', 'Davidson Building', 3, 2, 20, 2),
  (4, 'Imaging Core', 'Davidson Building', 1, 2, NULL, 2),
  (5, 'Materials Characterisation Lab', 'Rankine Building', 0, 3, 11, 1),
  (6, 'Laser Lab', 'Kelvin Building', -1, 4, NULL, 1),
  (7, 'Drug Screening Lab', 'Wolfson Building', 2, 5, 17, 3);
INSERT INTO InstrumentType VALUES
  ('NMR', 'NMR spectrometer', 45),
  ('MS', 'Mass spectrometer', 60),
  ('CONF', 'Confocal microscope', 40),
  ('SEM', 'Scanning electron microscope', 75),
  ('PCR', 'qPCR machine', 15),
  ('FLOW', 'Flow cytometer', 35),
  ('XRD', 'X-ray diffractometer', 55);
INSERT INTO Instrument VALUES
  (1, 'Bruker 400', 'NMR', 2, 2012, 'OK'),
  (2, 'Bruker 600', 'NMR', 2, 2019, 'OK'),
  (3, 'Orbitrap Exploris', 'MS', 2, 2021, 'OK'),
  (4, 'Xevo TQ', 'MS', 7, 2016, 'REP'),
  (5, 'Zeiss LSM 880', 'CONF', 4, 2017, 'OK'),
  (6, 'Leica SP8', 'CONF', 4, 2014, 'RET'),
  (7, 'QuantStudio 5', 'PCR', 3, 2018, 'OK'),
  (8, 'CFX96', 'PCR', 7, 2015, 'OK'),
  (9, 'FEI Quanta', 'SEM', 5, 2013, 'OK'),
  (10, 'JEOL 7800F', 'SEM', 5, 2020, 'REP'),
  (11, 'BD FACSAria', 'FLOW', 3, 2019, 'OK'),
  (12, 'Rigaku SmartLab', 'XRD', 5, 2016, 'OK'),
  (13, 'Attune NxT', 'FLOW', 7, 2022, 'OK'),
  (14, 'Bruker D8', 'XRD', 6, 2011, 'OK');
INSERT INTO Project VALUES
  (1, 'Catalyst Discovery', 1, 'EPSRC', 420000, '2021-10-01', 'ACT'),
  (2, 'Protein Folding Dynamics', 5, 'Wellcome', 650000, '2020-04-01', 'ACT'),
  (3, 'Lightweight Alloys', 9, 'EPSRC', 380000, '2019-01-01', 'DONE'),
  (4, 'Quantum Dot Sensors', 12, 'STFC', 290000, '2022-06-01', 'ACT'),
  (5, 'Kinase Inhibitor Screen', 15, 'MRC', 510000, '2021-01-01', 'ACT'),
  (6, 'Green Solvents', 2, 'Industry', 120000, '2023-03-01', 'ACT'),
  (7, 'Stem Cell Imaging', 6, 'Wellcome', 240000, '2022-09-01', 'HOLD'),
  (8, 'Thin Film Coatings', 19, 'Industry', 150000, '2023-09-01', 'ACT'),
  (9, 'Antibiotic Resistance', 17, 'MRC', 330000, '2020-02-01', 'DONE'),
  (10, 'Crystal Growth', 1, 'STFC', 200000, '2018-05-01', 'DONE');
INSERT INTO Booking VALUES
  (1, 1, 2, 1, '2024-01-08', 3, 'CMP'),
  (2, 1, 3, 1, '2024-01-09', 2, 'CMP'),
  (3, 3, 2, 6, '2024-01-10', 4, 'CMP'),
  (4, 5, 6, 7, '2024-01-11', 2, 'CXL'),
  (5, 5, 7, 2, '2024-01-12', 3, 'CMP'),
  (6, 7, 7, 2, '2024-01-15', 2, 'CMP'),
  (7, 11, 6, 2, '2024-01-16', 5, 'CMP'),
  (8, 9, 10, 3, '2024-01-17', 6, 'CMP'),
  (9, 12, 10, NULL, '2024-01-18', 2, 'CMP'),
  (10, 14, 13, 4, '2024-01-22', 8, 'CMP'),
  (11, 14, 14, 4, '2024-01-23', 6, 'CMP'),
  (12, 8, 16, 5, '2024-01-24', 3, 'CMP'),
  (13, 13, 17, 9, '2024-01-25', 4, 'CMP'),
  (14, 2, 18, 1, '2024-01-29', 2, 'CMP'),
  (15, 3, 3, 1, '2024-01-30', 5, 'CMP'),
  (16, 10, 19, 8, '2024-02-01', 4, 'CXL'),
  (17, 9, 19, 8, '2024-02-02', 5, 'CMP'),
  (18, 4, 16, 5, '2024-02-05', 6, 'CXL'),
  (19, 3, 16, 5, '2024-02-06', 7, 'CMP'),
  (20, 5, 8, NULL, '2024-02-07', 2, 'CMP'),
  (21, 11, 8, 2, '2024-02-08', 3, 'CMP'),
  (22, 12, 19, 8, '2024-02-09', 3, 'CMP'),
  (23, 1, 18, NULL, '2024-02-12', 1, 'CMP'),
  (24, 2, 2, 6, '2024-02-13', 4, 'CMP'),
  (25, 7, 16, 5, '2024-02-14', 2, 'CMP'),
  (26, 13, 17, 5, '2024-02-15', 3, 'CMP'),
  (27, 9, 14, 4, '2024-02-16', 2, 'CMP'),
  (28, 3, 7, 2, '2024-02-19', 6, 'CMP'),
  (29, 5, 6, 7, '2024-02-20', 3, 'CXL'),
  (30, 14, 13, 4, '2024-02-21', 5, 'CMP'),
  (31, 2, 3, NULL, '2024-03-04', 3, 'RES'),
  (32, 11, 7, 2, '2024-03-05', 4, 'RES'),
  (33, 9, 10, NULL, '2024-03-06', 3, 'RES'),
  (34, 12, 14, 4, '2024-03-07', 2, 'RES'),
  (35, 3, 17, 5, '2024-03-08', 5, 'RES'),
  (36, 1, 4, NULL, '2024-03-11', 1, 'CMP');
INSERT INTO Certification VALUES
  (2, 'NMR', '2020-11-02'), (2, 'MS', '2021-01-15'),
  (3, 'NMR', '2022-11-20'), (3, 'MS', '2023-02-01'),
  (18, 'NMR', '2024-01-10'),
  (4, 'NMR', '2015-06-01'), (4, 'MS', '2016-03-01'),
  (6, 'CONF', '2021-06-01'), (6, 'FLOW', '2021-08-01'),
  (7, 'CONF', '2021-12-01'), (7, 'PCR', '2021-12-15'), (7, 'FLOW', '2023-05-05'),
  (8, 'CONF', '2023-11-01'), (8, 'FLOW', '2024-01-20'),
  (10, 'SEM', '2020-12-01'), (10, 'XRD', '2021-03-01'),
  (19, 'SEM', '2023-10-01'), (19, 'XRD', '2023-11-15'),
  (13, 'XRD', '2022-10-01'),
  (14, 'XRD', '2023-12-01'), (14, 'SEM', '2024-01-30'),
  (16, 'PCR', '2022-12-01'), (16, 'MS', '2023-01-10'),
  (17, 'FLOW', '2019-09-01'), (17, 'PCR', '2019-10-01'),
  (11, 'SEM', '2018-05-01'),
  (20, 'CONF', '2012-09-01'), (20, 'PCR', '2012-09-01');
