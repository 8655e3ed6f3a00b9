-- Refunds, chargebacks, reversals and any other negative amount over the last 31 days, newest first.
SELECT
  dt,
  created_date,
  transaction_id,
  merchant_name,
  merchant_oid,
  transaction_type,
  amount,
  currency,
  order_description
FROM transactions
WHERE dt >= cast(cast(current_date - INTERVAL '31' DAY AS date) AS varchar)  -- the inner cast: DuckDB's date minus interval is a timestamp
  AND (
    amount < 0
    OR upper(transaction_type) IN ('REFUND', 'CHARGEBACK', 'REVERSAL')
  )
ORDER BY created_date DESC, transaction_id
