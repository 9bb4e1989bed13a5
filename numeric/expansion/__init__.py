"""The system-size expansion along time: transients of any model (mean field, ``V``,
``W`` and the 1/N^2 terms), their observables and basins of attraction.  The stationary
1/N^2 terms and the observables' stationary expansion are the mean field's
(:mod:`numeric.meanfield.stationary`, :mod:`numeric.meanfield.observables`): this
package builds on :mod:`numeric.meanfield`, never the other way.
"""
