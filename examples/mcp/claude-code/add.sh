#!/bin/sh
# Registers stockade with Claude Code for the current project, for you
# only (the default scope, "local"). --scope project writes ./.mcp.json
# (the file beside this one) to share it through version control;
# --scope user makes it available in every project.
# Every option of `claude mcp add` comes before the server's name;
# everything after "--" is the command Claude Code starts.
claude mcp add --transport stdio stockade -- stockade mcp --workspace /home/you/stockade-work
