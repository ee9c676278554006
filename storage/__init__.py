"""Storage adapters (database and blob stores); arrives with the workflow issue."""
