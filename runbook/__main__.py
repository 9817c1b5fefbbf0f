from runbook.entry import main

main()
