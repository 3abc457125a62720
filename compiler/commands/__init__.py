"""The commands around a build: `zonebake deploy` swaps a built server in for the running one
(deploy.py; releases.py for a server started with --release), `zonebake follow` is a
secondary's loop that answers NOTIFY (notify.py), transfers, builds and deploys (follow.py).
cli.py runs them; they use the driver (build.py, transfer.py, config.py), which never uses
them."""
