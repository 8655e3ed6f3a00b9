-- Daily totals per currency and transaction type over the last 31 days: transactions and amount.
-- Money stays decimal(18,3) end to end; dt is the report window's date (the partition: keep the filter to scan little).
SELECT
  dt,
  currency,
  transaction_type,
  count(*) AS transactions,
  sum(amount) AS total_amount
FROM transactions
WHERE dt >= cast(cast(current_date - INTERVAL '31' DAY AS date) AS varchar)  -- the inner cast: DuckDB's date minus interval is a timestamp
GROUP BY dt, currency, transaction_type
ORDER BY dt DESC, currency, transaction_type
