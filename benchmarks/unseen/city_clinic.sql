CREATE TABLE doctor (
  doctor_id INTEGER PRIMARY KEY,
  name TEXT,
  specialty TEXT,
  years_experience INTEGER
);
CREATE TABLE patient (
  patient_id INTEGER PRIMARY KEY,
  name TEXT,
  gender TEXT,
  age INTEGER,
  city TEXT
);
CREATE TABLE appointment (
  appointment_id INTEGER PRIMARY KEY,
  patient_id INTEGER,
  doctor_id INTEGER,
  appt_date TEXT,
  fee REAL,
  status TEXT,
  FOREIGN KEY (patient_id) REFERENCES patient(patient_id),
  FOREIGN KEY (doctor_id) REFERENCES doctor(doctor_id)
);
CREATE TABLE medication (
  medication_id INTEGER PRIMARY KEY,
  name TEXT,
  unit_price REAL
);
CREATE TABLE prescription (
  prescription_id INTEGER PRIMARY KEY,
  appointment_id INTEGER,
  medication_id INTEGER,
  quantity INTEGER,
  FOREIGN KEY (appointment_id) REFERENCES appointment(appointment_id),
  FOREIGN KEY (medication_id) REFERENCES medication(medication_id)
);
INSERT INTO doctor VALUES
  (1, 'Alice Moreau', 'Cardiology', 22),
  (2, 'Ben Okafor', 'Pediatrics', 8),
  (3, 'Carla Diaz', 'Dermatology', 15),
  (4, 'David Kim', 'Cardiology', 5),
  (5, 'Elena Petrova', 'Neurology', 30),
  (6, 'Frank Lee', 'Pediatrics', 12);
INSERT INTO patient VALUES
  (1, 'John Carter', 'M', 45, 'Springfield'),
  (2, 'Linda Park', 'F', 34, 'Riverton'),
  (3, 'Omar Haddad', 'M', 8, 'Springfield'),
  (4, 'Grace Liu', 'F', 61, 'Lakeside'),
  (5, 'Henry Walsh', 'M', 72, 'Riverton'),
  (6, 'Chloe Martin', 'F', 5, 'Lakeside'),
  (7, 'Ivan Petrov', 'M', 29, 'Springfield'),
  (8, 'Nina Costa', 'F', 52, 'Riverton');
INSERT INTO appointment VALUES
  (1, 1, 1, '2024-01-10', 200, 'completed'),
  (2, 3, 2, '2024-01-12', 90, 'completed'),
  (3, 4, 1, '2024-02-03', 200, 'completed'),
  (4, 2, 3, '2024-02-14', 120, 'cancelled'),
  (5, 5, 5, '2024-02-20', 250, 'completed'),
  (6, 6, 2, '2024-03-01', 90, 'completed'),
  (7, 7, 3, '2024-03-05', 120, 'completed'),
  (8, 1, 4, '2024-03-18', 150, 'completed'),
  (9, 8, 5, '2024-04-02', 250, 'scheduled'),
  (10, 4, 5, '2024-04-09', 250, 'completed'),
  (11, 2, 3, '2024-04-15', 120, 'completed'),
  (12, 5, 1, '2024-05-01', 200, 'scheduled'),
  (13, 3, 2, '2024-05-06', 90, 'cancelled'),
  (14, 1, 1, '2024-05-20', 200, 'completed');
INSERT INTO medication VALUES
  (1, 'Amoxicillin', 12.5),
  (2, 'Ibuprofen', 4.0),
  (3, 'Atorvastatin', 18.0),
  (4, 'Cetirizine', 6.5),
  (5, 'Levetiracetam', 30.0);
INSERT INTO prescription VALUES
  (1, 1, 3, 30),
  (2, 2, 1, 10),
  (3, 3, 3, 30),
  (4, 5, 5, 60),
  (5, 6, 1, 7),
  (6, 6, 2, 10),
  (7, 7, 4, 14),
  (8, 8, 3, 30),
  (9, 10, 5, 60),
  (10, 11, 4, 14),
  (11, 14, 2, 20);
