// Compiles Boost.URL's implementation once, so rnx needs no compiled Boost library.
#include <boost/url/src.hpp>
