-- The MySQL table for the bundled sample (Paimon shop.orders: id BIGINT key, amount DECIMAL(10,2),
-- status STRING, updated_at TIMESTAMP(3)). The worker checks it before writing anything.
CREATE TABLE orders (
  id         BIGINT NOT NULL PRIMARY KEY,
  amount     DECIMAL(10, 2),
  status     VARCHAR(32),
  updated_at DATETIME(3)
) DEFAULT CHARSET = utf8mb4;
