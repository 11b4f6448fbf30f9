from shirabe.cli import main

main()
