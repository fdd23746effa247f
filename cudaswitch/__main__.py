from cudaswitch.cli import main

main()
