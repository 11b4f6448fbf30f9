from shirabe.cli.app import main

main()
