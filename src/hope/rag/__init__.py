"""RAG evaluation of section 4.2: test questions, one RAG pipeline per chunker, RAGAS indicators.

The modules here do no file I/O; the DVC stages ``hope.stages.questions``, ``hope.stages.rag`` and
``hope.stages.ragas_eval`` read and write the data files.
"""
