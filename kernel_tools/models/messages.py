"""The words of a model step's errors that the co-pilot reads (a class too small to cross-validate
is a task problem, not a failed step): here, without the models' imports, for the co-pilot's own process."""

TOO_FEW_TO_CROSS_VALIDATE = "too few rows to cross-validate"
AS_A_SCORE = "whole-number classes may be an ordered score (regression)"
ORDERED_AS_A_SCORE = "classes that read as ordered levels may be an ordered score (regression on their ranks)"
