"""The app's views: thin page modules (wired in ``app.py/streamlit_app.py`` with ``st.navigation``) and the helpers that draw grader records."""
