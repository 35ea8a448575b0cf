// Compiles Boost.JSON's implementation once, so rnx needs no compiled Boost library.
#include <boost/json/src.hpp>
