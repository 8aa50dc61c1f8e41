"""Knowledge: the lab's own documents as a cited source (issue #41).

A user adds documents (PDF, Markdown, HTML, plain text, a folder or zip of them) to a collection:
their personal one, or one shared with named users. Each document is parsed with its pages and
headings (`parse`), split into passages (`chunk`), and indexed for BM25 always and for dense
retrieval when an embeddings endpoint is configured (`retrieve`, `embed`); a query ranks both and
fuses them by reciprocal rank. Storage is SQLite (FTS5) in the state folder by default, Postgres
with pgvector when DATABASE_URL is Postgres, behind one interface (`store.KnowledgeStore`).

The agent reaches it through the `search_knowledge` tool (`tool`), whose passages are cited [n]
with the document's title and page, as web sources are. Types shared by every part: `model`.
"""
