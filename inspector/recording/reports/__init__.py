"""Reports made from a recording: a self-contained HTML page and GitHub Markdown."""
