"""REST API for match records: submit a record, follow its verification."""
