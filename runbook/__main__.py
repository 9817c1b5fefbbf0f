from runbook.cli import main

main()
