from visioneval.cli import main

main()
