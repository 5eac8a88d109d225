"""Pipeline stages run by DVC (see dvc.yaml): each is a pure function plus a small ``main()``."""
