-- What the table holds per window date: rows, the newest transaction time and the newest report date.
-- A window re-fetched later (lookback) shows a later date_of_report; a missing dt means no load landed that day.
SELECT
  dt,
  count(*) AS transactions,
  min(created_date) AS first_transaction_at,
  max(created_date) AS last_transaction_at,
  max(date_of_report) AS latest_report_date
FROM transactions
GROUP BY dt
ORDER BY dt DESC
