"""RAG evaluation of section 4.2: test questions, one RAG pipeline per chunker, RAGAS indicators.

The modules here do no file I/O; the DVC stages ``hope.stages.questions_stage``,
``hope.stages.rag_stage`` and
``hope.stages.ragas_stage`` read and write the data files.
"""
