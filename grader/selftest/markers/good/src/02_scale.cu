// 02_scale.cu -- fixture: a CUDA lesson with snippets nested in a snippet.
//@ snippet scale_all
//@ snippet scale_kernel
__global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    //@ solution scale_kernel
    if (i < n)
        x[i] *= a;
    //@ stub
    //> (void)x; (void)a; (void)n; (void)i;
    //@ end solution scale_kernel
}
//@ end snippet scale_kernel

void scale_host(float *x, float a, int n)
{
    scale<<<(n + 255) / 256, 256>>>(x, a, n);
}
//@ end snippet scale_all
