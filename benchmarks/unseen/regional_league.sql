CREATE TABLE team (
  team_id INTEGER PRIMARY KEY,
  name TEXT,
  city TEXT,
  founded INTEGER,
  stadium_capacity INTEGER
);
CREATE TABLE player (
  player_id INTEGER PRIMARY KEY,
  name TEXT,
  team_id INTEGER,
  position TEXT,
  age INTEGER,
  goals INTEGER,
  FOREIGN KEY (team_id) REFERENCES team(team_id)
);
CREATE TABLE match (
  match_id INTEGER PRIMARY KEY,
  match_date TEXT,
  home_team_id INTEGER,
  away_team_id INTEGER,
  home_goals INTEGER,
  away_goals INTEGER,
  attendance INTEGER,
  FOREIGN KEY (home_team_id) REFERENCES team(team_id),
  FOREIGN KEY (away_team_id) REFERENCES team(team_id)
);
INSERT INTO team VALUES
  (1, 'Harbor City FC', 'Harbor City', 1905, 32000),
  (2, 'Northfield United', 'Northfield', 1921, 18000),
  (3, 'Redwood Rovers', 'Redwood', 1899, 24000),
  (4, 'Eastport Athletic', 'Eastport', 1950, 12000),
  (5, 'Lakeside Wanderers', 'Lakeside', 1932, 15500);
INSERT INTO player VALUES
  (1, 'Marco Silva', 1, 'Forward', 27, 14),
  (2, 'Jonas Berg', 1, 'Goalkeeper', 31, 0),
  (3, 'Luis Ortega', 2, 'Midfielder', 24, 5),
  (4, 'Ethan Cole', 2, 'Forward', 22, 11),
  (5, 'Samir Haddad', 3, 'Defender', 29, 2),
  (6, 'Pavel Horak', 3, 'Forward', 33, 17),
  (7, 'Tommy Reid', 4, 'Midfielder', 19, 3),
  (8, 'Andre Souza', 4, 'Defender', 26, 1),
  (9, 'Kevin Walsh', 5, 'Forward', 28, 9),
  (10, 'Felix Wagner', 5, 'Goalkeeper', 35, 0),
  (11, 'Oscar Lind', 1, 'Midfielder', 23, 6),
  (12, 'Ravi Kumar', 3, 'Midfielder', 21, 4);
INSERT INTO match VALUES
  (1, '2024-08-10', 1, 2, 2, 1, 28000),
  (2, '2024-08-10', 3, 4, 3, 0, 21000),
  (3, '2024-08-17', 5, 1, 1, 1, 14000),
  (4, '2024-08-17', 2, 3, 0, 2, 16500),
  (5, '2024-08-24', 4, 5, 2, 2, 9000),
  (6, '2024-08-24', 1, 3, 1, 0, 30500),
  (7, '2024-08-31', 2, 5, 3, 1, 15000),
  (8, '2024-08-31', 4, 1, 0, 4, 11000),
  (9, '2024-09-07', 3, 5, 2, 1, 22000),
  (10, '2024-09-07', 2, 4, 1, 1, 13000);
