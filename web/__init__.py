"""The browser client's files (package data, served by wildtable.server.web); no Python here."""
