from renderer.cli import main

main()
