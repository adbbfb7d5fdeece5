// SPDX-License-Identifier: Apache-2.0
// spectrum-opencv-peer: OpenCV's closest operations to Spectrum's filters, timed on the same 16-bit image, for
// spectrum-filterbench (tests/bench/filters.sh). A benchmark peer only (built when libopencv-dev is there; the product does not
// use OpenCV).
//   spectrum-opencv-peer RAW WIDTH HEIGHT REPEATS THREADS [OPERATION]
// RAW: WIDTH×HEIGHT unsigned 16-bit samples, native byte order. Prints "name seconds" per operation, the best of
// REPEATS, with OpenCV limited to THREADS threads (1: single-threaded); only OPERATION when it is named.

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

int main(int argc, char **argv)
{
    if (argc != 6 && argc != 7) {
        std::fprintf(stderr, "usage: spectrum-opencv-peer RAW WIDTH HEIGHT REPEATS THREADS [OPERATION]\n");
        return 2;
    }
    const int w = std::atoi(argv[2]), h = std::atoi(argv[3]), reps = std::atoi(argv[4]);
    cv::setNumThreads(std::atoi(argv[5]) <= 1 ? 0 : std::atoi(argv[5]));  // 0: no threading at all
    cv::Mat img(h, w, CV_16UC1);
    std::ifstream in(argv[1], std::ios::binary);
    if (!in.read(reinterpret_cast<char *>(img.data), std::streamsize(size_t(w) * h * 2))) {
        std::fprintf(stderr, "cannot read %s\n", argv[1]);
        return 1;
    }
    cv::Mat out, tmp, gx, gy, mag;
    const cv::Mat sharpen = (cv::Mat_<float>(3, 3) << -1, -1, -1, -1, 17, -1, -1, -1, -1) / 9.0f;  // the (v − p·mean)/(1 − p) kernel, p = 0.5
    const cv::Mat emboss = (cv::Mat_<float>(3, 3) << -1, -1, 0, -1, 0, 1, 0, 1, 1);
    const std::vector<std::pair<const char *, std::function<void()>>> ops{
        {"blur", [&] { cv::blur(img, out, cv::Size(3, 3), cv::Point(-1, -1), cv::BORDER_REPLICATE); }},
        {"despeckle", [&] { cv::medianBlur(img, out, 3); }},
        {"edge", [&] {
             cv::Sobel(img, gx, CV_32F, 1, 0, 3, 1, 0, cv::BORDER_REPLICATE);
             cv::Sobel(img, gy, CV_32F, 0, 1, 3, 1, 0, cv::BORDER_REPLICATE);
             cv::magnitude(gx, gy, mag);
             mag.convertTo(out, CV_16U);
         }},
        {"sharpen", [&] { cv::filter2D(img, out, -1, sharpen, cv::Point(-1, -1), 0, cv::BORDER_REPLICATE); }},
        {"emboss", [&] { cv::filter2D(img, out, -1, emboss, cv::Point(-1, -1), 32768, cv::BORDER_REPLICATE); }},
        {"gaussian", [&] { cv::GaussianBlur(img, out, cv::Size(7, 7), 1.0, 1.0, cv::BORDER_REPLICATE); }},
        {"unsharp", [&] {
             cv::GaussianBlur(img, tmp, cv::Size(13, 13), 2.0, 2.0, cv::BORDER_REPLICATE);
             cv::addWeighted(img, 2.0, tmp, -1.0, 0, out);
         }},
        {"invert", [&] { cv::subtract(cv::Scalar(4095), img, out); }},
        {"flip", [&] { cv::flip(img, out, 1); }},
        {"rotate", [&] { cv::rotate(img, out, cv::ROTATE_90_CLOCKWISE); }},
        {"zoom-bilinear", [&] { cv::resize(img, out, cv::Size(), 2, 2, cv::INTER_LINEAR); }},
        {"zoom-bicubic", [&] { cv::resize(img, out, cv::Size(), 2, 2, cv::INTER_CUBIC); }},
    };
    const std::string only = argc == 7 ? argv[6] : "";
    for (const auto &[name, op] : ops) {
        if (!only.empty() && only != name)
            continue;
        double best = 1e9;
        for (int r = 0; r < reps; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            op();
            best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        std::printf("%s %.6f\n", name, best);
    }
    return 0;
}
