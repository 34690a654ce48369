"""One search over the nodes of a Ray cluster (`--cluster ADDRESS`): driver.py hands blocks of
sub-search spaces to worker.py's actors, one per GPU of each node and one per node without a
GPU. Ray is an optional extra (`pip install 'fzn-gpu[cluster]'`); nothing here imports it
until a run asks for the cluster."""
