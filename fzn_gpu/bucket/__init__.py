"""Bucket elimination (the GPU bucket elimination paper, ../shared/papers/gpu-bucket-elimination-dpop.txt):
exact optima of optimisation models whose constraint graph has a low induced width, by dynamic
programming over tables instead of search.

- network.py: the model as a cost-function network (a table per constraint, the objective
  split into cost tables), or why it is not one;
- evaluate.py: a constraint's truth over grids of values (numpy), and the values a definition
  reaches;
- plan.py: the elimination order (min-fill), the induced width and the tables' sizes, known
  before anything runs;
- eliminate.py: the elimination itself (join, then min over the eliminated variable) on the
  host with numpy or on an OpenCL device (kernels/bucket.cl), and the optimal assignment
  recovered backwards;
- the engine that runs it (engine/bucket.py)."""
