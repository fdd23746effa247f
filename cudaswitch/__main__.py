from cudaswitch.cli import main

main(prog_name="cudaswitch")
