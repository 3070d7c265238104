"""What each command's page shows, one module per page: the charts of its sections, drawn from
the JSON report (`Report.to_json`). `sections` chooses them, `parts` holds what the pages share;
auditor/report/html.py lays a page out."""
