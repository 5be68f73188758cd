
¤
infer-7team-b…
maind
nvidia.com/gpu(GPU-8f2c0a51-1b7e-4c3d-9a2f-0d6e5b4c3a21(GPU-11111111-2222-3333-4444-555555555555
example.com/nicnic0	
sidecar