"""Persistence without Chainlit: schema and migrations, threads, accounts, files, state folder."""
