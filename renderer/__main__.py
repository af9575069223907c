from renderer.entry import main

main()
