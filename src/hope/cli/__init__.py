"""The command lines: ``hope`` (score, labelled, batch) and its subcommands' argument handling."""
