"""The device runtime: OpenCL devices found and checked (device.py, device_check.py,
opencl_start.py), programs built and recorded (build_record.py), and the kernels' interface
declared once and generated for both sides (kernel_abi.py for the search kernels, local_abi.py
for Adaptive Search, codegen.py for the constraint kinds, kernel_launch.py for a launch).
The engines (engine/, local/, bucket/, relax/) run on it; it knows nothing of them."""
