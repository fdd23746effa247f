from cudaswitch.launch import main

main(prog_name="cudaswitch")
