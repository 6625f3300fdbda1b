CREATE TABLE Supplier (
  Supp_ID INTEGER PRIMARY KEY,
  supp_nm TEXT,
  City TEXT,
  Cntry TEXT,
  Rating INTEGER
);
CREATE TABLE Warehouse (
  WH_ID INTEGER PRIMARY KEY,
  WH_Name TEXT,
  City TEXT,
  Cap_Units INTEGER,
  Open_Yr INTEGER
);
CREATE TABLE Employee (
  Emp_ID INTEGER PRIMARY KEY,
  Emp_Nm TEXT,
  Job_Cd TEXT,
  WH_ID INTEGER,
  Hire_Dt TEXT,
  Supervisor_ID INTEGER,
  FOREIGN KEY (WH_ID) REFERENCES Warehouse(WH_ID),
  FOREIGN KEY (Supervisor_ID) REFERENCES Employee(Emp_ID)
);
CREATE TABLE Product (
  Prod_ID INTEGER PRIMARY KEY,
  prod_nm TEXT,
  Categ TEXT,
  Unit_Prc REAL,
  Supp_ID INTEGER,
  FOREIGN KEY (Supp_ID) REFERENCES Supplier(Supp_ID)
);
CREATE TABLE Stock (
  WH_ID INTEGER,
  Prod_ID INTEGER,
  Qty_On_Hand INTEGER,
  Reorder_Lvl INTEGER,
  PRIMARY KEY (WH_ID, Prod_ID),
  FOREIGN KEY (WH_ID) REFERENCES Warehouse(WH_ID),
  FOREIGN KEY (Prod_ID) REFERENCES Product(Prod_ID)
);
CREATE TABLE Customer (
  Cust_ID INTEGER PRIMARY KEY,
  cust_nm TEXT,
  City TEXT,
  Segment TEXT
);
CREATE TABLE Orders (
  Ord_ID INTEGER PRIMARY KEY,
  Cust_ID INTEGER,
  WH_ID INTEGER,
  ord_dt TEXT,
  Status TEXT,
  FOREIGN KEY (Cust_ID) REFERENCES Customer(Cust_ID),
  FOREIGN KEY (WH_ID) REFERENCES Warehouse(WH_ID)
);
CREATE TABLE Order_Line (
  Ord_ID INTEGER,
  Line_No INTEGER,
  Prod_ID INTEGER,
  Qty INTEGER,
  Disc_Pct INTEGER,
  PRIMARY KEY (Ord_ID, Line_No),
  FOREIGN KEY (Ord_ID) REFERENCES Orders(Ord_ID),
  FOREIGN KEY (Prod_ID) REFERENCES Product(Prod_ID)
);
CREATE TABLE Shipment (
  Ship_ID INTEGER PRIMARY KEY,
  Ord_ID INTEGER,
  ship_dt TEXT,
  Carrier TEXT,
  Status TEXT,
  FOREIGN KEY (Ord_ID) REFERENCES Orders(Ord_ID)
);
INSERT INTO Supplier VALUES
  (1, 'Apex Components', 'Shenzhen', 'China', 4),
  (2, 'Nordic Timber AB', 'Gothenburg', 'Sweden', 5),
  (3, 'Lakeside Plastics', 'Chicago', 'USA', 3),
  (4, 'Rhein Elektro GmbH', 'Cologne', 'Germany', 4),
  (5, 'Sunrise Toys Co', 'Ningbo', 'China', 2),
  (6, 'Prairie Garden Supply', 'Omaha', 'USA', 3);
INSERT INTO Warehouse VALUES
  (1, 'North Hub', 'Chicago', 5000, 2009),
  (2, 'Gulf Depot', 'Houston', 3500, 2014),
  (3, 'Mountain DC', 'Denver', 2500, 2017),
  (4, 'Lakeshore Annex', 'Chicago', 1200, 2021);
INSERT INTO Employee VALUES
  (1, 'Karen Holt', 'MGR', 1, '2015-04-01', NULL),
  (2, 'Luis Ortega', 'SUPV', 1, '2017-08-14', 1),
  (3, 'Mei Chen', 'PICK', 1, '2021-03-02', 2),
  (4, 'Andre Baptiste', 'PICK', 1, '2022-06-20', 2),
  (5, 'Sara Quinn', 'DRV', 1, '2019-11-11', 2),
  (6, 'Tom Becker', 'MGR', 2, '2016-02-29', NULL),
  (7, 'Rita Alvarez', 'PICK', 2, '2020-01-06', 6),
  (8, 'Jamal Wright', 'DRV', 2, '2022-09-12', 6),
  (9, 'Olga Ivanova', 'CLRK', 2, '2023-01-09', 6),
  (10, 'Ben Carter', 'MGR', 3, '2018-07-23', NULL),
  (11, 'Nina Patel', 'PICK', 3, '2023-05-15', 10),
  (12, 'Victor Lang', 'SUPV', 4, '2019-03-18', 1),
  (13, 'Zoe Fischer', 'PICK', 4, '2022-10-03', 12),
  (14, 'Emeka Obi', 'CLRK', 1, '2020-05-27', 1);
INSERT INTO Product VALUES
  (1, 'LED Desk Lamp', 'ELEC', 34.5, 4),
  (2, 'USB-C Hub', 'ELEC', 49.0, 1),
  (3, 'Wireless Speaker', 'ELEC', 89.0, 1),
  (4, 'Oak Bookshelf', 'FURN', 189.0, 2),
  (5, 'Pine Side Table', 'FURN', 75.0, 2),
  (6, 'Office Chair', 'FURN', 145.0, 3),
  (7, 'Building Blocks Set', 'TOY', 29.99, 5),
  (8, 'Remote Control Car', 'TOY', 59.0, 5),
  (9, 'Garden Hose 20m', 'GRDN', 24.0, 6),
  (10, 'Terracotta Planter', 'GRDN', 18.5, 6),
  (11, 'Smart Thermostat', 'ELEC', 149.0, 4),
  (12, 'Folding Patio Chair', 'GRDN', 39.0, 3);
INSERT INTO Stock VALUES
  (1, 1, 120, 50), (1, 2, 80, 40), (1, 3, 35, 40), (1, 4, 12, 10),
  (1, 6, 40, 20), (1, 11, 18, 25), (1, 7, 150, 60), (1, 9, 90, 30),
  (2, 2, 60, 40), (2, 5, 25, 30), (2, 8, 70, 40), (2, 9, 110, 50), (2, 12, 45, 20),
  (3, 4, 8, 10), (3, 10, 200, 80), (3, 12, 60, 30), (3, 9, 150, 60), (3, 1, 30, 25),
  (3, 6, 70, 20),
  (4, 7, 300, 100), (4, 8, 40, 50), (4, 1, 25, 20);
INSERT INTO Customer VALUES
  (1, 'Blue Door Interiors', 'Chicago', 'RETAIL'),
  (2, 'Maple Street Market', 'Houston', 'WHOLESALE'),
  (3, 'Peak Outfitters', 'Denver', 'RETAIL'),
  (4, 'Harbor Home Goods', 'Houston', 'RETAIL'),
  (5, 'Midwest Office Supply', 'Chicago', 'WHOLESALE'),
  (6, 'Sunbelt Distributors', 'Dallas', 'WHOLESALE'),
  (7, 'Green Thumb Nursery', 'Denver', 'RETAIL'),
  (8, 'City Kids Toys', 'Chicago', 'RETAIL');
INSERT INTO Orders VALUES
  (1, 1, 1, '2023-11-03', 'Completed'),
  (2, 5, 1, '2023-11-20', 'Completed'),
  (3, 2, 2, '2023-12-05', 'Completed'),
  (4, 6, 2, '2023-12-18', 'Cancelled'),
  (5, 3, 3, '2024-01-04', 'Completed'),
  (6, 6, 2, '2024-01-09', 'Cancelled'),
  (7, 6, 2, '2024-01-22', 'Cancelled'),
  (8, 5, 4, '2024-01-30', 'Completed'),
  (9, 2, 2, '2024-02-06', 'Shipped'),
  (10, 7, 3, '2024-02-14', 'Completed'),
  (11, 8, 4, '2024-02-27', 'Completed'),
  (12, 2, 1, '2024-03-08', 'Completed'),
  (13, 6, 2, '2024-03-15', 'Shipped'),
  (14, 4, 2, '2024-03-31', 'Completed'),
  (15, 2, 3, '2024-04-01', 'Shipped'),
  (16, 5, 1, '2024-04-12', 'Pending'),
  (17, 1, 4, '2024-04-19', 'Pending'),
  (18, 6, 2, '2024-04-25', 'Cancelled'),
  (19, 3, 1, '2024-05-02', 'Pending'),
  (20, 4, 2, '2024-05-06', 'Shipped');
INSERT INTO Order_Line VALUES
  (1, 1, 1, 10, 0), (1, 2, 4, 2, 5),
  (2, 1, 2, 25, 10), (2, 2, 3, 5, 0),
  (3, 1, 9, 40, 15),
  (4, 1, 8, 12, 0),
  (5, 1, 12, 6, 0),
  (6, 1, 9, 30, 10),
  (7, 1, 5, 8, 0),
  (8, 1, 7, 60, 20), (8, 2, 8, 15, 20),
  (9, 1, 9, 50, 15), (9, 2, 12, 20, 15),
  (10, 1, 9, 10, 0),
  (11, 1, 7, 24, 0), (11, 2, 8, 6, 0),
  (12, 1, 11, 4, 5), (12, 2, 1, 12, 5),
  (13, 1, 5, 10, 0),
  (14, 1, 4, 1, 0), (14, 2, 5, 2, 0),
  (15, 1, 12, 30, 10),
  (16, 1, 2, 40, 10),
  (17, 1, 3, 3, 0),
  (18, 1, 11, 2, 0),
  (19, 1, 1, 5, 0),
  (20, 1, 5, 4, 0);
INSERT INTO Shipment VALUES
  (1, 1, '2023-11-05', 'UPS', 'DELIVERED'),
  (2, 2, '2023-11-22', 'FedEx', 'DELIVERED'),
  (3, 3, '2023-12-07', 'Gulf Freight', 'DELIVERED'),
  (4, 5, '2024-01-06', 'UPS', 'RETURNED'),
  (5, 8, '2024-02-01', 'FedEx', 'RETURNED'),
  (6, 9, '2024-02-08', 'Gulf Freight', 'IN_TRANSIT'),
  (7, 10, '2024-02-16', 'UPS', 'DELIVERED'),
  (8, 11, '2024-02-28', 'FedEx', 'RETURNED'),
  (9, 12, '2024-03-11', 'FedEx', 'DELIVERED'),
  (10, 13, '2024-03-18', 'Gulf Freight', 'IN_TRANSIT'),
  (11, 14, '2024-04-02', 'DHL', 'DELIVERED'),
  (12, 15, '2024-04-03', 'Gulf Freight', 'IN_TRANSIT'),
  (13, 20, '2024-05-08', 'Gulf Freight', 'IN_TRANSIT'),
  (14, 5, '2024-01-20', 'UPS', 'DELIVERED');
