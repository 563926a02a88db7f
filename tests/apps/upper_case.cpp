// upper_case: a real BOINC-API app for boinc-rs's tests, built against Debian's
// libboinc-app-dev. It reads the file it opens as "in", computes for a while (argv[1]
// million iterations of a small kernel, default 200), checkpointing when the client
// allows, and writes "in" upper-cased to "out", then calls boinc_finish. Suspend,
// resume and quit come from the client through BOINC's API, not from this code.

#include <boinc/boinc_api.h>
#include <boinc/app_ipc.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

static const char* CHECKPOINT = "upper_case_checkpoint";

int main(int argc, char** argv) {
    int retval = boinc_init();
    if (retval) return retval;
    long total = (argc > 1 ? std::atol(argv[1]) : 200) * 1000000L;

    std::string in_path, out_path;
    boinc_resolve_filename_s("in", in_path);
    boinc_resolve_filename_s("out", out_path);
    std::ifstream in(in_path.c_str());
    if (!in) {
        std::fprintf(stderr, "upper_case: cannot open %s\n", in_path.c_str());
        boinc_finish(1);
    }
    std::stringstream text;
    text << in.rdbuf();

    long done = 0;
    double value = 0.5;
    std::ifstream saved(CHECKPOINT);
    if (saved >> done >> value) {
        std::fprintf(stderr, "upper_case: resuming at %ld\n", done);
    }
    const long slice = 1000000L;
    while (done < total) {
        for (long i = 0; i < slice; i++) {
            value = std::sqrt(value * 0.999999 + 1e-3);
        }
        done += slice;
        boinc_fraction_done(static_cast<double>(done) / total);
        if (boinc_time_to_checkpoint()) {
            std::ofstream cp(CHECKPOINT);
            cp << done << " " << value << "\n";
            cp.close();
            boinc_checkpoint_completed();
        }
    }

    std::string upper = text.str();
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    std::ofstream out(out_path.c_str());
    out << upper;
    out.close();
    boinc_finish(0);
    return 0;
}
