// How many clusters of 1, 2 and 4 blocks of 256 threads and `smem` bytes of shared memory (225328:
// the two-tile fused kernel's launch) the GPU holds at once. Committed 2026-12-05 (session from
// 16:00 UTC; ran in device calls 2 and 4); built with nvcc -O2 -arch=sm_90a, a throwaway
// measurement, not part of the build.
#include <cstdio>
__global__ void k(int* p) {
  extern __shared__ int s[];
  if (p) p[0] = s[0];
}
int main() {
  for (int smem : {225328, 150000, 100000}) {
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    for (int c : {1, 2, 4}) {
      cudaLaunchConfig_t cfg = {};
      cfg.gridDim = dim3(264);
      cfg.blockDim = dim3(256);
      cfg.dynamicSmemBytes = smem;
      cudaLaunchAttribute a[1];
      a[0].id = cudaLaunchAttributeClusterDimension;
      a[0].val.clusterDim.x = c;
      a[0].val.clusterDim.y = 1;
      a[0].val.clusterDim.z = 1;
      cfg.attrs = a;
      cfg.numAttrs = 1;
      int n = -1;
      cudaError_t e = cudaOccupancyMaxActiveClusters(&n, k, &cfg);
      printf("smem %d cluster %d: max active clusters %d (%d blocks) %s\n", smem, c, n, n * c,
             cudaGetErrorString(e));
    }
  }
  int sms;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  printf("SMs %d\n", sms);
}
