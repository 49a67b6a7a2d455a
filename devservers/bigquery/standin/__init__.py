"""
The BigQuery REST API stand-in, by part: store (the project's state in memory and SQLite),
accounts (the service-account keys it issues), values (GoogleSQL values to and from SQLite and
REST), resources (datasets and tables), sql (GoogleSQL on SQLite: translation, scripts, dry
runs), jobs (query, load and copy jobs) and handler (the HTTP routes). ../serve.py starts it;
its header says which BigQuery behaviour it follows and where that was checked.
"""
