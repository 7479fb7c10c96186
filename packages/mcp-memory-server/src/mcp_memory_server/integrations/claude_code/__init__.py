"""Automatic recall for Claude Code: the hooks themselves (:mod:`.hooks`) and their entries in
Claude Code's settings (:mod:`.settings`)."""
