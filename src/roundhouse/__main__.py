from roundhouse.cli import main

main()
