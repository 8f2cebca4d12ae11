from faascope.cli import main

main()
