// One way to launch a kernel on any backend: launch<Kernel>(backend, shape,
// params). On the host it runs the body through the host executor; on a GPU
// through launch_on_cuda<Kernel>, which the operator's .cu file instantiates
// for each of its kernels (device_launch.cuh holds the definition).
#pragma once

#include <stdexcept>

#include "harness/backend.h"
#include "harness/host_executor.h"

namespace nvh {

template <class Kernel>
void launch_on_cuda(Backend& backend, const LaunchShape& shape,
                    const typename Kernel::Params& params);

template <class Kernel>
void launch(Backend& backend, const LaunchShape& shape, const typename Kernel::Params& params) {
  if (backend.kind() == BackendKind::host) {
    launch_on_host<Kernel>(shape, params);
    return;
  }
#if defined(NVH_HAVE_CUDA)
  launch_on_cuda<Kernel>(backend, shape, params);
#else
  throw std::logic_error("launch: a " + backend.name() + " backend in a build without CUDA");
#endif
}

}  // namespace nvh
